// UDP sockets on the loopback for the tests of the network-by-domain resolver, where a test
// stands in for the command's resolver library, the sandbox's socket or the host's resolver.
#pragma once

#include <netinet/in.h>

#include "core/unique_fd.h"

namespace cordon::test_support {

// A UDP socket bound to 127.0.0.1 on a free port, which `bound` receives.
core::UniqueFd BoundUdp(sockaddr_in* bound);

// Whether `fd` becomes readable within `ms` milliseconds.
bool Readable(int fd, int ms);

}  // namespace cordon::test_support
