// The sockets the connect broker opens in the host's network namespace for a sandboxed command
// or its proxy (exec/outside_connect.cc, exec/parent_tunnel.cc): set up as the command's own
// would have been, on a local port that stays theirs.
#pragma once

#include <sys/socket.h>

#include <random>
#include <vector>

#include "core/unique_fd.h"

namespace cordon::exec {

// Copies the options a program sets on a TCP socket before connecting that change how it
// behaves (keep-alive, no delay, v6-only, linger) from `from` to `to` (of `domain`).
void CopySocketOptions(int from, int to, int domain);

// A range of local ports, both ends included.
struct PortRange {
  unsigned low = 32768;
  unsigned high = 60999;
};

// Where the outside sockets' local ports are searched: the host's net.ipv4.ip_local_port_range
// less net.ipv4.ip_local_reserved_ports, read once by the broker that opens them (ReadLocalPorts),
// and the random point each search starts from.
struct LocalPorts {
  PortRange range;
  std::vector<PortRange> reserved;
  std::mt19937 random{std::random_device{}()};
};

// The settings of the network namespace this process is in, from /proc/sys (the kernel's
// defaults where they cannot be read).
LocalPorts ReadLocalPorts();

// A connect started in this process's network namespace (StartOutsideConnect).
struct OutsideConnect {
  core::UniqueFd socket;  // non-blocking; empty unless err is 0 or EINPROGRESS
  int err = 0;            // 0: connected; EINPROGRESS: connecting; else why nothing was opened
};

// Opens a TCP socket of `address`'s family, set up like `options_from`'s (CopySocketOptions;
// -1: with TCP_NODELAY), binds it to a local port of its own choosing and starts its connect
// to `address`. Bound as a bind() with a port binds, the kernel keeps that port with the socket
// when a reset closes it (SOCK_BINDPORT_LOCK), so the command cannot bind the closed socket to
// a port of the host's (squatting a service's port before it starts).
//
// The port is searched for as the kernel searches for an unbound connect's: from a random
// point through `ports`' range, passing over the ports reserved for services, a port another
// socket holds and one
// whose connection to `address` is still in TIME_WAIT (connect's EADDRNOTAVAIL: a fresh socket
// for the next port). SO_REUSEADDR lets a port be bound again that only cordon's own closed
// connections hold, to other addresses, as an unbound connect shares it. A port a program's
// closed connection holds without SO_REUSEADDR cannot be bound: the search passes over it.
// No port found: EADDRNOTAVAIL, the kernel's own answer to an unbound connect then.
OutsideConnect StartOutsideConnect(const sockaddr_storage& address, int options_from,
                                   LocalPorts& ports);

}  // namespace cordon::exec
