// cordon-resolver's own fence, put up once its sockets exist and before it reads a byte the
// sandboxed command sent: it parses those bytes, so it is confined as if a query could subvert
// it. After ConfineToSockets the process can only
//
//   - receive on its two sockets, answer the sandbox's clients (sendto on `sandbox_fd`) and
//     send reports on `channel_fd` (without an address);
//   - wait (poll, and its restart after a stop), manage memory (no executable mappings), read
//     the clock, write to stderr, and exit.
//
// It cannot open a file, make or connect a socket, duplicate a descriptor, run a program,
// signal or trace another process, or reach anything beyond the sandbox but its broker: any
// such call kills it (the broker then records that the resolver stopped, and the sandbox's
// lookups fail at once). no_new_privs is set first.
#pragma once

#include "cordon/error.h"

namespace cordon::resolver {

[[nodiscard]] Result<void> ConfineToSockets(int sandbox_fd, int channel_fd);

}  // namespace cordon::resolver
