// `cordon serve --status` and `--stop`: the run server of this user, found at its socket,
// asked nothing. Its pid comes from the kernel (SO_PEERCRED of a connection to the socket: the
// process that listens), checked to be this user's; stopping it is SIGTERM, then SIGKILL if it
// still listens after a grace period. A command it was running is ended with it (its sandbox's
// init dies with the server); the client of that run reports the lost server.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "cordon/error.h"
#include "server/paths.h"

namespace cordon::server {

struct ServerStatus {
  bool running = false;
  pid_t pid = 0;
  // Another cordon executable than the caller's (one started before an upgrade): the reason
  // it is not used, empty when it is the same.
  std::string stale;
};

// Whether a server of this user listens at `paths.socket`. Errors name what could not be
// checked (an unsafe socket directory, a listener of another user).
[[nodiscard]] Result<ServerStatus> QueryServer(const ServerPaths& paths);

// Stops the server when one runs: SIGTERM, then SIGKILL after `grace`, until its socket
// refuses connections. The status it had (running false: there was none).
[[nodiscard]] Result<ServerStatus> StopServer(const ServerPaths& paths,
                                              std::chrono::milliseconds grace);

}  // namespace cordon::server
