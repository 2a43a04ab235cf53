// `cordon run`'s side of the run server: hand the command over when a trusted server of this
// user is listening, else say so and let the caller run it itself.
#pragma once

#include <optional>
#include <string>

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

// Connects to `paths.socket`, checks the server (peer.h) and hands it `invocation` (this
// process's command line, working directory and environment) with this process's stdin,
// stdout, stderr and working directory attached, exactly as the `cordon` front does
// (wire.h). The server resolves the command line itself; on kAccepted it runs, and the result
// is printed on this process's stdout and stderr. A server whose backlog is full (stopped, or
// swamped), or that does not greet the connection within kHelloWaitMs, is not used (nothing
// was sent to it). One that has not answered within kAcceptWaitMs, or not sent the result
// within the run's timeout (kAccepted's wait) plus kReplyGraceMs, ends the wait: exit 125,
// and this process's exit cancels the command. Never fails otherwise: every other problem
// means "run it yourself".
// False when no server can be listening (no directory, or a safe one without a socket): the
// caller need not build a request. True otherwise, also for a directory that is not safe
// (RunThroughServer says why it is not used).
bool MayBeListening(const ServerPaths& paths);

ClientResult RunThroughServer(const ServerPaths& paths, const Invocation& invocation);

// A server's refusal as the warning the caller prints after its own "cordon: ": without the
// final newlines and without the "cordon: " a server (of this or an earlier version) put first.
std::string RefusalWarning(std::string text);

}  // namespace cordon::server
