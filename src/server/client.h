// `cordon run`'s side of the run server: hand the command over when a trusted server of this
// user is listening, else say so and let the caller run it itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "server/paths.h"
#include "server/wire.h"

namespace cordon::server {

struct ClientResult {
  bool served = false;  // false: no server took the command; nothing ran, run it yourself
  int exit_code = 0;    // when served
  // Why it was not served, when that deserves a warning (a server that refused or could not
  // be trusted); empty when simply no server is running.
  std::string warning;
};

// Connects to `paths.socket`, checks the server (peer.h), sends `request` with `fds` (stdout,
// stderr[, stdin] when the output is streamed) and waits for the reply, which it prints on
// this process's stdout and stderr. Never fails: every problem means "run it yourself".
ClientResult RunThroughServer(const ServerPaths& paths, const RunRequest& request,
                              const std::vector<int>& fds);

}  // namespace cordon::server
