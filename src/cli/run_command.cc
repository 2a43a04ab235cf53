// `cordon run [flags] -- CMD ARGS...` or `cordon run [flags] -c 'shell text'`: run one command
// under the policy and the sandbox. Output streams through to the terminal (or is collected and
// printed as one JSON object with --json). Exit: the command's own code; 124 timeout; 125
// cordon could not set up; 126 denied by policy; 128+N killed by signal N.
#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "cli/subcommands.h"
#include "core/paths.h"
#include "cordon/session.h"
#include "worktree/strict_policy.h"
#include "report/json_report.h"

namespace cordon::cli {
namespace {

struct RunOptions {
  SandboxFlags flags;
  std::string workspace;
  std::string shell_text;
  std::vector<std::string> argv;
  bool json = false;
  bool worktree = false;
};

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // our own stdout is gone; keep supervising, the result still counts
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// The command starts in the caller's directory when that lies inside the workspace, otherwise
// in the workspace itself. The writable root is always the workspace, never this directory.
std::filesystem::path ChooseCwd(const std::filesystem::path& workspace) {
  std::error_code ec;
  auto here = std::filesystem::current_path(ec);
  if (ec) return workspace;
  auto canonical = core::Canonical(here);
  if (canonical && core::IsWithin(*canonical, workspace)) return *canonical;
  return workspace;
}

int RunRun(const GlobalOptions& global, const RunOptions& options) {
  if (options.shell_text.empty() == options.argv.empty()) {
    fmt::print(stderr, "cordon: run needs either -c 'shell text' or a command after --\n");
    return kExitSetupFailed;
  }
  if (options.worktree) {
    if (auto flags = worktree::CheckWorktreeFlags(options.flags.unsafe, options.flags.mode);
        !flags) {
      return ReportSetupError(flags.error());
    }
  }
  auto config = LoadConfig(global, options.flags);
  if (!config) return ReportSetupError(config.error());
  if (config->sandbox.mode == SandboxMode::kOff && !options.worktree) {
    fmt::print(stderr,
               "cordon: WARNING: running without a sandbox (mode off): the command can write, "
               "read and connect anywhere your user can\n");
  }
  std::filesystem::path workspace = options.workspace;
  if (workspace.empty()) {
    std::error_code ec;
    workspace = std::filesystem::current_path(ec);
    if (ec) {
      fmt::print(stderr, "cordon: cannot read the current directory: {}\n", ec.message());
      return kExitSetupFailed;
    }
  }
  if (options.worktree) {
    // Strict policy: the worktree (found from the workspace) is the only writable root.
    auto mode = worktree::EnterWorktreeMode(*config, workspace);
    if (!mode) return ReportSetupError(mode.error());
    if (auto notice = worktree::DroppedRootsNotice(mode->dropped_roots); !notice.empty()) {
      fmt::print(stderr, "cordon: {}\n", notice);
    }
    workspace = mode->worktree.root;
  }
  auto session = Session::Create(*std::move(config), workspace);
  if (!session) return ReportSetupError(session.error());

  CommandRequest request;
  if (!options.shell_text.empty()) {
    request.shell_text = options.shell_text;
  } else {
    request.argv = options.argv;
  }
  request.cwd = ChooseCwd(session->workspace());
  if (!options.json && ::isatty(STDIN_FILENO)) request.stdin_fd = STDIN_FILENO;

  OutputCallback stream;
  if (!options.json) {
    stream = [](OutputStream which, std::string_view data) {
      WriteAll(which == OutputStream::kStdout ? STDOUT_FILENO : STDERR_FILENO, data);
    };
  }
  const RunResult result = session->Run(request, stream);

  if (options.json) {
    fmt::print("{}\n", report::Dump(report::RunResultToJson(result), 2));
    return result.CliExitCode();
  }
  switch (result.status) {
    case RunStatus::kDenied:
      fmt::print(stderr, "cordon: denied by policy [{}]: {}\n", result.decision.rule_id,
                 result.decision.reason);
      break;
    case RunStatus::kSetupFailed:
      fmt::print(stderr, "cordon: could not run the command: {}\n", result.error);
      break;
    case RunStatus::kTimedOut:
      fmt::print(stderr, "cordon: timed out after {} s; every process of the command was killed\n",
                 static_cast<double>(session->config().limits.timeout.count()) / 1000.0);
      break;
    case RunStatus::kExited:
    case RunStatus::kSignaled:
      break;
  }
  return result.CliExitCode();
}

}  // namespace

void AddSandboxFlags(CLI::App& app, SandboxFlags& flags) {
  app.add_option("--mode,-m", flags.mode, "Sandbox mode: off, read_only, workspace_write");
  app.add_option("--network", flags.network, "Child network access: deny or allow");
  app.add_option("--backend", flags.backend, "Sandbox backend: auto, native, bwrap, seatbelt");
  app.add_option("--writable-root", flags.writable_roots,
                 "An extra existing path the command may write (repeatable)");
  app.add_option("--timeout", flags.timeout_seconds, "Wall-clock limit in seconds");
  app.add_flag("--unsafe", flags.unsafe, "Run without a sandbox (mode off); prints a warning");
}

Subcommand AddRunCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand("run", "Run one command under the policy and the sandbox");
  auto options = std::make_shared<RunOptions>();
  AddSandboxFlags(*app, options->flags);
  app->add_option("--workspace,-w", options->workspace,
                  "The writable workspace (default: the current directory)");
  app->add_option("-c", options->shell_text, "Shell text, run as /bin/sh -c TEXT");
  app->add_flag("--json", options->json, "Collect output and print one JSON result");
  app->add_option("command", options->argv, "The command and its arguments, after --");
  app->add_flag("--worktree", options->worktree,
                "Worktree mode: the workspace must be a linked git worktree, the only writable "
                "root (docs/mcp.md)");
  return {app, [&global, options] { return RunRun(global, *options); }};
}

}  // namespace cordon::cli
