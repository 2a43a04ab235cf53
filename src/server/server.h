// The run server: a long-lived process of one user that runs `cordon run`'s commands in
// long-lived sessions, so that each command finds its sandbox already prepared (decision 0023)
// instead of building one from nothing (docs/decisions/0026-run-server.md).
//
// Worker threads wait in accept() themselves, one kept spare while others serve (no hand-over
// from an accepting thread per connection); each connection's worker checks the peer (peer.h),
// reads one request (wire.h), runs it in the session of its configuration and workspace
// (created on first use, at most kMaxSessions kept, the least recently used dropped), and
// replies. The client's socket is the run's cancel descriptor: a client that dies takes its
// command's whole tree with it. The server exits after `idle_timeout` without a connection.
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>

#include "cordon/error.h"
#include "server/paths.h"
#include "server/wire.h"

namespace cordon::server {

inline constexpr std::size_t kMaxSessions = 8;
inline constexpr int kMaxConnections = 64;

// A front's invocation (wire.h) resolved the way `cordon run` resolves its own command line:
// the request it would have sent, and the run's timeout.
struct ResolvedInvocation {
  RunRequest request;
  std::chrono::milliseconds timeout{0};
};
// nullopt: not served here (another subcommand, --help, a flag or configuration error, mode
// off, --worktree, ...): the front execs the full cordon, which runs it and says what it says.
using InvocationResolver =
    std::function<std::optional<ResolvedInvocation>(const Invocation&, bool stdin_is_terminal)>;

struct ServerOptions {
  ServerPaths paths;
  std::chrono::seconds idle_timeout{900};
  // One line per connection (refused, ran, failed) goes here; nullptr: silent.
  std::FILE* log = stderr;
  // Resolves the invocations of `cordon` fronts; unset: every front is told to run it itself.
  InvocationResolver resolve_invocation;
};

// Binds the socket (refusing when another server holds the lock) and serves until idle.
// Errors are those of the set-up (directory, lock, bind); serving errors are logged.
[[nodiscard]] Result<void> Serve(const ServerOptions& options);

}  // namespace cordon::server
