// `cordon mcp [sandbox flags] [--workspace DIR]`: an MCP server on stdin/stdout whose tool
// run_command runs commands through one pinned Session (docs/mcp.md). stdout carries only the
// protocol; everything cordon says goes to stderr. Exit 0 at EOF on stdin. When the
// configuration, the flags or the workspace are invalid, the reason goes to stderr and the
// server still serves, refusing every command with that reason (a client that got no
// `initialize` answer would only say "failed to connect"), and exits 125 at EOF.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/mcp_log.h"
#include "cli/option_values.h"
#include "cli/subcommands.h"
#include "config/validate.h"
#include "cordon/session.h"
#include "mcp/session_runner.h"
#include "mcp/stdio_server.h"
#include "mcp/unavailable_runner.h"
#include "worktree/git_commit.h"

namespace cordon::cli {
namespace {

struct McpOptions {
  SandboxFlags flags;
  std::string workspace;
  double approval_timeout_seconds = 300;
  bool worktree = false;
  bool structured_output = false;
};

// Serves `runner` on stdio until EOF; `exit_code` when the serving ended cleanly.
int Serve(mcp::CommandRunner& runner, mcp::ServerOptions server_options, int exit_code) {
  server_options.server_version = CORDON_VERSION;
  const mcp::StdioResult result =
      mcp::ServeStdio(runner, server_options, STDIN_FILENO, STDOUT_FILENO);
  if (!result.clean) {
    // A worker still uses the server: leave without running destructors.
    std::fflush(stderr);
    std::_Exit(exit_code);
  }
  return exit_code;
}

// What would make the server refuse to start: said on stderr as ever, and then served, so that
// the client connects and shows the reason (mcp/unavailable_runner.h). Exit 125 at EOF.
int ServeUnavailable(const Error& error) {
  (void)ReportSetupError(error);
  std::error_code ec;
  std::filesystem::path here = std::filesystem::current_path(ec);
  if (ec) here = "/";
  // Also where a user looks after "failed to connect" (docs/mcp.md): the client may keep
  // stderr in a log of its own, or nowhere.
  if (std::optional<std::filesystem::path> log = McpLogPath()) {
    Result<void> logged = AppendMcpLog(*log, here, error.message);
    if (logged) {
      fmt::print(stderr, "cordon mcp: the reason is also in {}\n", log->string());
    } else {
      fmt::print(stderr, "cordon mcp: could not log the reason: {}\n", logged.error().message);
    }
  }
  fmt::print(stderr, "cordon mcp: serving on stdio, every command refused until this is fixed\n");
  mcp::UnavailableRunner runner(error.message, here);
  return Serve(runner, {}, kExitSetupFailed);
}

int RunMcp(const GlobalOptions& global, const McpOptions& options) {
  if (auto flags = CheckWorktreeFlags(options.flags, options.worktree); !flags) {
    return ServeUnavailable(flags.error());
  }
  if (!(options.approval_timeout_seconds > 0)) {
    return ServeUnavailable(
        Error{ErrorCode::kInvalidArgument, 0, "--approval-timeout: expected seconds > 0"});
  }
  auto config = LoadConfig(global, options.flags);
  if (!config) return ServeUnavailable(config.error());
  WarnWhenUnsandboxed(*config, options.worktree, "serving");
  auto workspace = ResolveWorkspace(*config, options.workspace, options.worktree);
  if (!workspace) return ServeUnavailable(workspace.error());
  // The server's session runs many commands: it prepares their namespaces once (ADR 0010).
  auto session =
      Session::Create(*std::move(config), workspace->path,
                      SessionOptions{.long_lived = true, .runtime_dir = RuntimeDirectory()});
  if (!session) return ServeUnavailable(session.error());
  if (Result<void> here = CheckSessionIsHere(*session, *workspace); !here) {
    return ServeUnavailable(here.error());
  }

  mcp::ServerOptions server_options;
  // git_commit: worktree mode's linked worktree, else the workspace when the sandbox keeps its
  // .git read-only (worktree::CommitRoot).
  server_options.commit_root =
      workspace->linked ? std::optional(workspace->linked->root)
                        : worktree::CommitRoot(session->config().sandbox, session->workspace());
  mcp::SessionRunner runner(*std::move(session));

  server_options.structured_output = options.structured_output;
  server_options.elicitation_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(options.approval_timeout_seconds * 1000.0));
  fmt::print(stderr, "cordon mcp: serving on stdio, workspace {}\n", runner.Workspace().string());
  return Serve(runner, std::move(server_options), 0);
}

}  // namespace

Subcommand AddMcpCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "mcp", "Serve the run_command tool to an MCP client over stdio (JSON-RPC 2.0)");
  auto options = std::make_shared<McpOptions>();
  AddSandboxFlags(*app, options->flags);
  app->add_option("--workspace,-w", options->workspace,
                  "The writable workspace (default: the current directory)")
      ->type_name("DIR");
  app->add_option("--approval-timeout", options->approval_timeout_seconds,
                  "Seconds to wait for a person to approve an outside_sandbox request "
                  "(default 300)")
      ->type_name("SECONDS")
      ->check(SecondsValue(config::kMaxTimeoutSeconds));
  app->add_flag("--worktree", options->worktree,
                "Worktree mode: the workspace must be a linked git worktree, the only writable "
                "root (docs/mcp.md)");
  app->add_flag("--structured-output", options->structured_output,
                "Add outputSchema to the tools and structuredContent to each result, for "
                "harnesses that parse them (docs/mcp.md)");
  return {app, [&global, options] { return RunMcp(global, *options); }};
}

}  // namespace cordon::cli
