// cordon-resolver's own fence, put up once its sockets exist and before it reads a byte the
// sandboxed command sent: it parses those bytes, so it is confined as if a query could subvert
// it. After ConfineToSockets the process can only
//
//   - take the sandbox's TCP clients (accept4 on the DNS and the proxy listener), receive on
//     its sockets (with a descriptor attached only on the channel: the connected sockets the
//     broker makes for the proxy), answer the sandbox's clients (sendto with an address on the
//     UDP socket only) and send without an address on the others: its TCP clients, the
//     proxy's connections and its channel to the broker; shut a socket's half down (a relayed
//     end of file); make pipes and splice through them (the proxy's relay). It holds no other
//     socket, and can make or connect none;
//   - wait (poll, and its restart after a stop), manage memory (no executable mappings), read
//     the clock, write to stderr, and exit.
//
// It cannot open a file, make or connect a socket, duplicate a descriptor, run a program,
// signal or trace another process, or reach anything beyond the sandbox but its broker: any
// such call kills it (the broker then records that the resolver stopped, and the sandbox's
// lookups fail at once). no_new_privs is set first.
//
// The sockets it holds are the UDP socket, the TCP listeners, the connections it accepts there
// and the ones the broker connected, whose descriptor numbers are not known ahead: receiving
// and sending without an address are allowed on any descriptor, which reach nothing else (a
// pipe or /dev/null only fails), and a connected TCP socket given an address by sendto (a
// fast open to elsewhere) is refused by the filter.
#pragma once

#include "cordon/error.h"

namespace cordon::resolver {

struct ResolverSockets {
  int datagram = -1;  // UDP, the sandbox's 127.0.0.1:53
  int stream = -1;    // TCP listener there
  int proxy = -1;     // TCP listener, the sandbox's 127.0.0.1:1023
  int channel = -1;   // to the broker
};

[[nodiscard]] Result<void> ConfineToSockets(const ResolverSockets& sockets);

}  // namespace cordon::resolver
