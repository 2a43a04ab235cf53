// The sockets the connect broker opens in the host's network namespace for a sandboxed command
// or its proxy (exec/outside_connect.cc, exec/parent_tunnel.cc): set up as the command's own
// would have been, on a local port that stays theirs.
#pragma once

#include <random>

namespace cordon::exec {

// Copies the options a program sets on a TCP socket before connecting that change how it
// behaves (keep-alive, no delay, v6-only, linger) from `from` to `to` (of `domain`).
void CopySocketOptions(int from, int to, int domain);

// Binds the outside socket to a local port of its own choosing, as a bind() with a port does:
// the kernel then keeps that port with the socket when a reset closes it (SOCK_BINDPORT_LOCK),
// so the command cannot bind the closed socket to a port of the host's (squatting a service's
// port before it starts). 0, or the errno of the last try.
int PinLocalPort(int socket, int domain, std::mt19937& random);

}  // namespace cordon::exec
