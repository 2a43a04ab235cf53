#include "run_helpers.h"

#include <signal.h>

#include <fstream>
#include <thread>

#include "exec/command_pipes.h"
#include "exec/spawn_unsandboxed.h"

namespace cordon::exec::testing {

plan::LaunchPlan MakePlan(std::vector<std::string> argv, std::vector<std::string> env,
                          std::filesystem::path cwd) {
  plan::LaunchPlan plan;
  plan.sandboxed = false;
  plan.argv = std::move(argv);
  plan.env = std::move(env);
  plan.cwd = cwd;
  plan.workspace = cwd;
  return plan;
}

Result<RunResult> SpawnAndSupervise(const plan::LaunchPlan& plan, const SuperviseOptions& options) {
  CORDON_TRY(CommandPipes pipes, CreateCommandPipes());
  CORDON_TRY(core::UniqueFd dev_null, OpenDevNull());
  CORDON_TRY(LaunchedProcess process, SpawnUnsandboxed(plan, MakeStdio(pipes, dev_null.get())));
  pipes.CloseWriteEnds();
  return Supervise(std::move(process),
                   OutputReaders{std::move(pipes.stdout_read), std::move(pipes.stderr_read)},
                   options);
}

namespace {
bool GoneNow(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  // A zombie (not yet reaped by whoever inherited it) runs nothing any more.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}
}  // namespace

bool ProcessGone(pid_t pid, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!GoneNow(pid)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace cordon::exec::testing
