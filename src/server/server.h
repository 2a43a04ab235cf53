// The run server: a long-lived process of one user that runs `cordon run`'s commands in
// long-lived sessions, so that each command finds its sandbox already prepared (decision 0023)
// instead of building one from nothing (docs/decisions/0026-run-server.md).
//
// Worker threads wait in accept() themselves, one kept spare while others serve (no hand-over
// from an accepting thread per connection); each connection's worker checks the peer (peer.h),
// reads one invocation (wire.h), resolves it, runs it in the session of its configuration and
// workspace (created on first use, at most kMaxSessions kept, the least recently used dropped
// once it is idle; while every kept one is busy the client runs a new workspace's command itself:
// server/admission.h), and replies. The client's socket is the run's cancel descriptor: a client
// that dies takes its command's whole tree with it. The server exits after `idle_timeout` without a
// connection.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"
#include "server/paths.h"
#include "server/wire.h"

namespace cordon::server {

inline constexpr std::size_t kMaxSessions = 8;
inline constexpr int kMaxConnections = 64;

// A client's invocation (wire.h) resolved the way `cordon run` resolves its own command line:
// the configuration, the workspace, the command and the caller's context.
struct RunRequest {
  Config config;
  // The configuration's JSON form (config::ToJsonChecked: every byte as it is): sessions are
  // kept by it, with what that form does not carry (the files the loader read).
  std::string config_key;
  std::filesystem::path workspace;
  // st_dev and st_ino of the workspace as the client's directory reaches it: a session whose
  // workspace is another directory (its name swapped meanwhile, another mount namespace) is
  // refused instead of running somewhere else.
  std::uint64_t workspace_dev = 0;
  std::uint64_t workspace_ino = 0;
  std::vector<std::string> argv;
  std::optional<std::string> shell_text;
  std::filesystem::path cwd;
  bool json = false;       // capture and reply with the --json report; no descriptors used
  bool quiet = false;      // --quiet: no line per denial on stderr
  bool has_stdin = false;  // the command reads the caller's stdin (its terminal, or copied)
  std::vector<std::string> env;
  std::string home;
};
struct ResolvedInvocation {
  RunRequest request;
  std::chrono::milliseconds timeout{0};
};
// `cwd_fd` is the directory the client sent (the invocation's cwd is its path here now): a
// relative path of the command line is resolved through it. nullopt: not served here (another
// subcommand, --help, a flag or configuration error, mode off, --worktree, ...): the client
// runs it itself and says what it says.
using InvocationResolver =
    std::function<std::optional<ResolvedInvocation>(const Invocation&, int cwd_fd, int stdin_fd)>;

struct ServerOptions {
  ServerPaths paths;
  std::chrono::seconds idle_timeout{900};
  // One line per connection (refused, ran, failed) goes here; nullptr: silent.
  std::FILE* log = stderr;
  // Resolves the clients' invocations; unset: every client is told to run it itself.
  InvocationResolver resolve_invocation;
  // Where the sessions record their commands' placeholders (SessionOptions::runtime_dir).
  std::filesystem::path runtime_dir;
};

// Binds the socket (refusing when another server holds the lock) and serves until idle.
// Errors are those of the set-up (directory, lock, bind); serving errors are logged.
[[nodiscard]] Result<void> Serve(const ServerOptions& options);

}  // namespace cordon::server
