// `cordon serve [--idle-timeout SECONDS]`: the run server of this user (src/server, decision
// 0026). `cordon run` hands its commands to it while it runs, so that each finds its sandbox
// already prepared. Runs in the foreground until idle; exit 0 then, 125 when it cannot start
// (another server is running, the socket directory is not safe, the kernel lacks SO_PEERPIDFD).
#include <fmt/format.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/subcommands.h"
#include "server/control.h"
#include "server/server.h"

namespace cordon::cli {
namespace {

struct ServeOptions {
  double idle_timeout_seconds = 900;
  bool status = false;
  bool stop = false;
};

// The LSB's "program is not running" for --status.
constexpr int kExitNotRunning = 3;
constexpr double kMaxIdleSeconds = 7 * 24 * 3600;  // a week

server::ServerPaths Paths() {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  return server::DefaultServerPaths(runtime_dir != nullptr ? std::optional<std::string>(runtime_dir)
                                                           : std::nullopt);
}

int ShowStatus() {
  const server::ServerPaths paths = Paths();
  Result<server::ServerStatus> status = server::QueryServer(paths);
  if (!status) return ReportSetupError(status.error());
  if (!status->running) {
    fmt::print("no run server is running for this user (socket {})\n", paths.socket.string());
    return kExitNotRunning;
  }
  fmt::print("run server: pid {}, listening on {}\n", status->pid, paths.socket.string());
  if (!status->stale.empty()) {
    fmt::print(
        "not used by this cordon: {}; `cordon serve --stop` ends it, and the next "
        "`cordon run` starts a new one\n",
        status->stale);
  }
  return 0;
}

int Stop() {
  const server::ServerPaths paths = Paths();
  Result<server::ServerStatus> stopped = server::StopServer(paths, std::chrono::seconds(5));
  if (!stopped) return ReportSetupError(stopped.error());
  if (!stopped->running) {
    fmt::print("no run server was running for this user\n");
  } else {
    fmt::print("stopped the run server (pid {})\n", stopped->pid);
  }
  return 0;
}

int RunServe(const ServeOptions& options) {
  if (options.status && options.stop) {
    fmt::print(stderr, "cordon: serve: --status and --stop cannot be combined\n");
    return kExitSetupFailed;
  }
  if (options.status) return ShowStatus();
  if (options.stop) return Stop();
  // Whole seconds, at least one (a session unused that long is dropped: server/server.cc), at
  // most a week (the clock arithmetic stays far from overflowing).
  if (!(options.idle_timeout_seconds >= 1 && options.idle_timeout_seconds <= kMaxIdleSeconds) ||
      options.idle_timeout_seconds !=
          static_cast<double>(static_cast<std::int64_t>(options.idle_timeout_seconds))) {
    fmt::print(stderr, "cordon: --idle-timeout {}: expected whole seconds from 1 to {}\n",
               options.idle_timeout_seconds, kMaxIdleSeconds);
    return kExitSetupFailed;
  }
  server::ServerOptions server_options;
  server_options.paths = Paths();
  server_options.resolve_invocation = ResolveRunInvocation;
  server_options.runtime_dir = RuntimeDirectory();
  server_options.idle_timeout =
      std::chrono::seconds(static_cast<std::int64_t>(options.idle_timeout_seconds));
#if defined(__GLIBC__)
  // One malloc arena for every thread: a worker's own arena would keep its pages after its run
  // (the server is the supervisor of every served run, and its resident set is one of issue 3's
  // figures; its few workers rarely allocate at once).
  (void)::mallopt(M_ARENA_MAX, 1);
#endif
  // Pin no directory of the caller's for as long as the server lives.
  if (::chdir("/") != 0) return ReportSetupError(Error{ErrorCode::kSystem, errno, "chdir(/)"});
  if (Result<void> served = server::Serve(server_options); !served) {
    return ReportSetupError(served.error());
  }
  return 0;
}

}  // namespace

Subcommand AddServeCommand(CLI::App& root, const GlobalOptions&) {
  CLI::App* app = root.add_subcommand(
      "serve", "Serve `cordon run` from a long-lived process (faster start-up; docs/server.md)");
  auto options = std::make_shared<ServeOptions>();
  app->add_option("--idle-timeout", options->idle_timeout_seconds,
                  "Exit after this many seconds without a command (default 900)")
      ->type_name("SECONDS");
  app->add_flag("--status", options->status,
                "Say whether this user's run server runs (its pid); exit 3 when none does");
  app->add_flag("--stop", options->stop,
                "Stop this user's run server (SIGTERM, then SIGKILL after 5 s); a command it "
                "runs ends with it");
  return {app, [options] { return RunServe(*options); }};
}

}  // namespace cordon::cli
