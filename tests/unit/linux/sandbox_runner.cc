#include "sandbox_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <system_error>

#include "core/paths.h"
#include "exec/connect_broker.h"
#include "linux/launcher.h"
#include "plan/host_placeholders.h"
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
  // As a session does: the absent .git and host-run files held for the run (host_placeholders.h).
  Result<plan::HostPlaceholders> placeholders =
      plan::HostPlaceholders::Hold(launch_plan.placeholders);
  if (!placeholders) {
    ::close(out[0]);
    ::close(out[1]);
    return std::unexpected(placeholders.error());
  }
  launch_plan.placeholders = placeholders->covered();
  auto launched = linux_native::Launch(launch_plan, stdio);
  ::close(out[1]);
  if (!launched) {
    ::close(out[0]);
    return std::unexpected(launched.error());
  }
  ProbeRun run;
  // The command's connect() calls wait for the supervisor's broker (docs/decisions/0019): this
  // runner plays that part while it reads the output.
  std::unique_ptr<exec::ConnectBroker> broker;
  if (launched->connect_listener.valid()) {
    auto created = exec::ConnectBroker::Create(std::move(launched->connect_listener),
                                               std::move(launched->connect_rules));
    if (created) broker = std::move(*created);
  }
  char buffer[4096];
  for (;;) {
    pollfd fds[3] = {{out[0], POLLIN, 0},
                     {broker ? broker->fd() : -1, POLLIN, 0},
                     {broker ? broker->listener_fd() : -1, POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents != 0 || fds[2].revents != 0) broker->Service();
    if (fds[0].revents == 0) continue;
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
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

}  // namespace cordon::testing
