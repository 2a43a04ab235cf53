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
#include "server/server.h"

namespace cordon::cli {
namespace {

struct ServeOptions {
  double idle_timeout_seconds = 900;
};

int RunServe(const ServeOptions& options) {
  if (!(options.idle_timeout_seconds > 0)) {
    fmt::print(stderr, "cordon: --idle-timeout: expected seconds > 0\n");
    return kExitSetupFailed;
  }
  server::ServerOptions server_options;
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  server_options.paths = server::DefaultServerPaths(
      runtime_dir != nullptr ? std::optional<std::string>(runtime_dir) : std::nullopt);
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
  return {app, [options] { return RunServe(*options); }};
}

}  // namespace cordon::cli
