// The sandbox resolver's and proxy's sockets with network by domain (docs/network-domains.md):
// the command's process, in the sandbox's own network namespace and still holding its
// capabilities there, binds a UDP and a TCP socket to 127.0.0.1:53 (the nameserver of the
// sandbox's resolv.conf) and a TCP one to 127.0.0.1:1023 (the proxy its environment names), and
// sends them to the supervisor, whose cordon-resolver answers on them (exec/resolver_process.h).
// Ports below 1024 need CAP_NET_BIND_SERVICE: once the capabilities are dropped no process of
// the command can bind them, so nothing else can answer there.
#pragma once

#include "linux/error_pipe.h"

namespace cordon::linux_native {

// Binds the UDP socket, then a listening TCP one (for answers larger than a UDP message), then
// the proxy's listening one, sends each on `broker_fd` (the connect broker's channel, before
// the listener) in that order, and closes its own copies. Async-signal-safe.
StepResult SendResolverSockets(int broker_fd);

}  // namespace cordon::linux_native
