// `cordon run`'s side of the run server: hand the command over when a trusted server of this
// user is listening, else say so and let the caller run it itself.
#pragma once

#include <chrono>
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
  // No server is running there (no directory, no socket, or a stale one): one may be started.
  bool none_running = false;
};

// Connects to `paths.socket`, checks the server (peer.h), sends `request` with `fds` (stdout,
// stderr[, stdin] when the output is streamed) and waits for the reply, which it prints on
// this process's stdout and stderr. A server whose backlog is full (stopped, or swamped), or
// that does not greet the connection within kHelloWait, is not used (nothing was sent to it). One
// that has not replied after `run_timeout` plus kReplyGrace (it enforces that timeout itself, so it
// is stopped or hung) ends the wait: exit 125, and this process's exit cancels the command. Never
// fails otherwise: every other problem means "run it yourself".
inline constexpr std::chrono::seconds kReplyGrace{5};
// How long a server may take to greet a new connection (kHello) before the client runs its
// command itself; nothing is sent to it before that greeting.
inline constexpr std::chrono::seconds kHelloWait{2};
// False when no server can be listening (no directory, or a safe one without a socket): the
// caller need not build a request. True otherwise, also for a directory that is not safe
// (RunThroughServer says why it is not used).
bool MayBeListening(const ServerPaths& paths);

ClientResult RunThroughServer(const ServerPaths& paths, const RunRequest& request,
                              const std::vector<int>& fds, std::chrono::milliseconds run_timeout);

}  // namespace cordon::server
