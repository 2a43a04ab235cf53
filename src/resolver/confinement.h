// cordon-resolver's own fence, put up once its sockets exist and before it reads a byte the
// sandboxed command sent: it parses those bytes, so it is confined as if a query could subvert
// it. After ConfineToSockets the process can only
//
//   - take the sandbox's TCP clients (accept4 on `stream_fd`), receive on its sockets, answer
//     the sandbox's clients (sendto with an address on `sandbox_fd` only) and send without an
//     address on the others: its TCP clients and its channel to the broker (it holds no other
//     socket, and can make none);
//   - wait (poll, and its restart after a stop), manage memory (no executable mappings), read
//     the clock, write to stderr, and exit.
//
// It cannot open a file, make or connect a socket, duplicate a descriptor, run a program,
// signal or trace another process, or reach anything beyond the sandbox but its broker: any
// such call kills it (the broker then records that the resolver stopped, and the sandbox's
// lookups fail at once). no_new_privs is set first.
//
// The sandbox-side sockets it holds are the UDP socket, the TCP listener and the connections it
// accepts there, whose descriptor numbers are not known ahead: receiving and sending without an
// address are allowed on any descriptor, which reach nothing else (a pipe or /dev/null only
// fails).
#pragma once

#include "cordon/error.h"

namespace cordon::resolver {

[[nodiscard]] Result<void> ConfineToSockets(int sandbox_fd, int stream_fd);

}  // namespace cordon::resolver
