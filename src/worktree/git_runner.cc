#include "worktree/git_runner.h"

#include <fmt/format.h>

#include <array>
#include <string_view>
#include <utility>

#include "exec/command_pipes.h"
#include "exec/spawn_unsandboxed.h"
#include "exec/supervisor.h"
#include "plan/launch_plan.h"

extern char** environ;

namespace cordon::worktree {
namespace {

constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// Copied from the caller when set: where git is, where the person's identity is configured,
// and the identity variables themselves.
constexpr std::array<std::string_view, 10> kPassed = {"PATH",
                                                      "HOME",
                                                      "XDG_CONFIG_HOME",
                                                      "USER",
                                                      "LOGNAME",
                                                      "GIT_AUTHOR_NAME",
                                                      "GIT_AUTHOR_EMAIL",
                                                      "GIT_COMMITTER_NAME",
                                                      "GIT_COMMITTER_EMAIL",
                                                      "TZ"};

std::vector<std::string> CallerEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
    env.emplace_back(*entry);
  return env;
}

}  // namespace

std::vector<std::string> GitEnvironment(const std::vector<std::string>& caller_env) {
  std::vector<std::string> env;
  bool has_path = false;
  for (const std::string& entry : caller_env) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view name(entry.data(), eq);
    for (std::string_view passed : kPassed) {
      if (name == passed) {
        env.push_back(entry);
        if (name == "PATH") has_path = true;
        break;
      }
    }
  }
  if (!has_path) env.push_back(fmt::format("PATH={}", kDefaultPath));
  // Plain messages (we show git's output to the model) and never a prompt: git has no
  // terminal here.
  env.emplace_back("LC_ALL=C");
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  return env;
}

std::vector<std::string> GitArgv(const std::filesystem::path& worktree,
                                 const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git",
                                   "-C",
                                   worktree.string(),
                                   "-c",
                                   "core.hooksPath=/dev/null",
                                   "-c",
                                   "core.fsmonitor=false",
                                   "-c",
                                   "core.pager=cat",
                                   "-c",
                                   "diff.ignoreSubmodules=all",
                                   "-c",
                                   "submodule.recurse=false"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Result<GitOutput> RunGit(const std::filesystem::path& worktree,
                         const std::vector<std::string>& args, const GitRunOptions& options) {
  plan::LaunchPlan plan;
  plan.sandboxed = false;
  plan.argv = GitArgv(worktree, args);
  plan.env = GitEnvironment(CallerEnvironment());
  plan.cwd = worktree;
  plan.workspace = worktree;
  plan.enforcement.backend = "none";

  CORDON_TRY(exec::CommandPipes pipes, exec::CreateCommandPipes());
  CORDON_TRY(core::UniqueFd dev_null, exec::OpenDevNull());
  auto process = exec::SpawnUnsandboxed(plan, exec::MakeStdio(pipes, dev_null.get()));
  if (!process) {
    return Fail(ErrorCode::kNotFound,
                fmt::format("could not start git: {}", process.error().message));
  }
  pipes.CloseWriteEnds();
  exec::SuperviseOptions supervise;
  supervise.timeout = options.timeout;
  supervise.cancel_fd = options.cancel_fd;
  supervise.output_cap = 256 * 1024;
  RunResult result = exec::Supervise(
      *std::move(process),
      exec::OutputReaders{std::move(pipes.stdout_read), std::move(pipes.stderr_read)}, supervise);
  switch (result.status) {
    case RunStatus::kExited:
      return GitOutput{result.exit_code, std::move(result.stdout_data.data),
                       std::move(result.stderr_data.data)};
    case RunStatus::kTimedOut:
      return Fail(ErrorCode::kSystem,
                  fmt::format("git {} timed out after {} s; killed",
                              args.empty() ? "" : args.front(), options.timeout.count() / 1000));
    case RunStatus::kSignaled:
      return Fail(
          ErrorCode::kSystem,
          fmt::format("git {} was killed by signal {}{}", args.empty() ? "" : args.front(),
                      result.signal, result.error.empty() ? "" : " (" + result.error + ")"));
    case RunStatus::kDenied:
    case RunStatus::kSetupFailed:
      break;
  }
  return Fail(ErrorCode::kSystem, fmt::format("git could not run: {}", result.error));
}

}  // namespace cordon::worktree
