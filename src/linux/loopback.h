// Brings up "lo" in the sandbox's fresh network namespace (it starts down), so the command's
// own servers and tests can use 127.0.0.1 while nothing leaves the namespace.
#pragma once

#include "linux/error_pipe.h"

namespace cordon::linux_native {

// Needs CAP_NET_ADMIN over the namespace (init has it in its user namespace).
// Async-signal-safe.
StepResult BringUpLoopback();

// Network by domain: a second IPv4 address on the loopback (127.0.0.2, inside 127.0.0.0/8, which
// is local already). glibc's getaddrinfo with AI_ADDRCONFIG asks for IPv4 addresses only where
// an interface has one other than 127.0.0.1: without it `getent ahostsv4`, `curl -4` or
// Node's family-4 lookups would fail before asking cordon's resolver. Same needs as above.
StepResult AddIpv4Address();

}  // namespace cordon::linux_native
