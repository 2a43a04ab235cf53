#include "sandbox_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "core/paths.h"
#include "linux/launcher.h"
#include "plan/launch_plan.h"

extern char** environ;

namespace cordon::testing {

std::string ProbeRun::line() const { return stdout_text.substr(0, stdout_text.find('\n')); }

const linux_native::KernelFeatures& Features() {
  static const linux_native::KernelFeatures features = linux_native::ProbeKernel();
  return features;
}

bool NativeSandboxAvailable() {
  const auto& f = Features();
  if (f.namespaces_usable() && f.seccomp) return true;
  const char* must = std::getenv("CORDON_TEST_MUST_WORK");
  if (must != nullptr && std::string(must) == "1") {
    ADD_FAILURE() << "native sandbox unavailable but CORDON_TEST_MUST_WORK=1: " << f.notes;
    return false;
  }
  return false;
}

std::string ProbePath() {
  // scripts/run_unprivileged.sh copies the binaries elsewhere and names the probe's new place.
  if (const char* staged = std::getenv("CORDON_PROBE"); staged != nullptr && staged[0] != '\0') {
    return staged;
  }
  return CORDON_PROBE_PATH;
}

// The build tree may lie under the host's /tmp, which the sandbox replaces with a private one:
// run a copy of the probe from the workspace, which is always visible inside.
std::string StageProbe(const std::filesystem::path& workspace) {
  const std::filesystem::path staged = workspace / ".cordon_probe";
  std::error_code ec;
  if (!std::filesystem::exists(staged, ec)) {
    std::filesystem::copy_file(ProbePath(), staged, ec);
    if (ec) ADD_FAILURE() << "copy " << ProbePath() << " to " << staged << ": " << ec.message();
  }
  return staged.string();
}

Result<ProbeRun> RunInSandbox(const Config& config, const std::filesystem::path& workspace,
                              std::vector<std::string> command, std::vector<std::string> caller_env,
                              const std::filesystem::path& caller_home) {
  if (!command.empty() && command[0] == "probe") command[0] = StageProbe(workspace);
  if (caller_env.empty()) {
    for (char** e = environ; *e != nullptr; ++e) caller_env.emplace_back(*e);
  }
  plan::PlanRequest request;
  request.argv = std::move(command);
  CORDON_TRY(request.workspace, core::Canonical(workspace));
  request.caller_env = std::move(caller_env);
  request.caller_home = caller_home;
  CORDON_TRY(plan::LaunchPlan launch_plan, plan::Plan(config, Features(), request));
  return RunPlan(std::move(launch_plan));
}

Result<ProbeRun> RunPlan(plan::LaunchPlan launch_plan) {
  if (!launch_plan.argv.empty() && launch_plan.argv[0] == "probe") {
    launch_plan.argv[0] = StageProbe(launch_plan.workspace);
  }
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Fail(ErrorCode::kSystem, "pipe2");
  exec::StdioFds stdio{-1, out[1], 2};
  auto launched = linux_native::Launch(launch_plan, stdio);
  ::close(out[1]);
  if (!launched) {
    ::close(out[0]);
    return std::unexpected(launched.error());
  }
  ProbeRun run;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(out[0], buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    run.stdout_text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = -1;
  if (::read(launched->status_fd.get(), &status, sizeof status) == sizeof status) {
    run.wait_status = status;
  }
  while (::waitpid(launched->pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return run;
}

TempDir::TempDir(const std::filesystem::path& parent) {
  std::string pattern = (parent / "cordon-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << pattern << ") failed";
    return;
  }
  path_ = *core::Canonical(pattern);
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace cordon::testing
