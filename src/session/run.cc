// Session::Run: policy, plan, launch, supervise. Every exit path returns a RunResult; nothing is
// started unless the policy allowed it and the plan gives every guarantee the config asks for.

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>

#include "cordon/session.h"
#include "core/unique_fd.h"
#include "exec/command_pipes.h"
#include "exec/spawn_unsandboxed.h"
#include "exec/stdin_relay.h"
#include "exec/supervisor.h"
#include "plan/file_denials.h"
#include "plan/host_placeholders.h"
#include "plan/launch_plan.h"
#include "session/backend_choice.h"
#include "session/request.h"
#include "session/run_denials.h"
#include "session/run_for.h"
#include "session/session_internals.h"
#include "session/session_state.h"
#include "session/tool_cache_dir.h"
#include "zygote/zygote_slot.h"

namespace cordon {
namespace {

using Clock = std::chrono::steady_clock;

// Nothing ran, so no layer was in force: the planned enforcement is not reported.
RunResult SetupFailed(RunResult result, std::string message) {
  result.status = RunStatus::kSetupFailed;
  result.enforcement = Enforcement{};
  result.error = std::move(message);
  return result;
}

// The sandbox was built and the command could not be executed in it: the command's failure,
// reported as a shell does (127: not found, 126: found but not executable), with what the agent
// can do about it. The layers were in force.
RunResult CommandNotFound(RunResult result, const plan::LaunchPlan& plan, int err) {
  const std::string& name = plan.argv.front();
  const char* where = plan.sandboxed ? " in the sandbox" : "";
  result.status = RunStatus::kExited;
  result.exit_code = err == EACCES ? 126 : 127;
  if (err == EACCES) {
    result.error = fmt::format("{}: permission denied: not executable{}", name, where);
  } else if (plan.argv.size() == 1 && name.find_first_of(" \t;|&$<>()'\"") != std::string::npos) {
    result.error = fmt::format(
        "{}: command not found: this is one argument with spaces or shell syntax in it; to run "
        "shell text, pass it with -c (cordon run -c '...')",
        name);
  } else if (name.find('/') != std::string::npos) {
    result.error = fmt::format("{}: no such file{}", name, where);
  } else {
    std::string path = "not set";
    for (const std::string& entry : plan.env) {
      if (entry.starts_with("PATH=")) path = entry.substr(5);
    }
    result.error = fmt::format("{}: command not found{} (PATH: {})", name, where, path);
  }
  return result;
}

// The caller's descriptors a run owns (Caller::take_fds); empty otherwise.
struct CallerFds {
  core::UniqueFd stdin_fd;
  core::UniqueFd stdout_fd;
  core::UniqueFd stderr_fd;
};

// A cancel descriptor that is already readable: the caller gave up before anything started.
bool IsReadable(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

// Everything that needs a plan: descriptors, launch, supervision.
RunResult LaunchAndSupervise(const session::SessionBackends& backends, zygote::ZygoteSlot& zygote,
                             const limits::LimitsSupport& limits_support,
                             const plan::LaunchPlan& plan, const CommandRequest& request,
                             bool take_fds, CallerFds& fds, std::chrono::milliseconds timeout,
                             std::uint64_t output_cap, const OutputCallback& on_output,
                             RunResult result) {
  if (IsReadable(request.cancel_fd)) {
    result.status = RunStatus::kSignaled;
    result.signal = SIGKILL;
    result.error = "cancelled";
    return result;
  }
  Result<exec::CommandPipes> pipes = exec::CreateCommandPipes();
  if (!pipes) return SetupFailed(std::move(result), pipes.error().message);
  // stdin: the caller's terminal itself; anything else of the caller's copied into a pipe of
  // the command's own (exec/stdin_relay.h); /dev/null without one, never inherited by default.
  core::UniqueFd dev_null;
  exec::StdinRelay relay;
  int stdin_fd = request.stdin_fd;
  if (stdin_fd < 0) {
    Result<core::UniqueFd> opened = exec::OpenDevNull();
    if (!opened) return SetupFailed(std::move(result), opened.error().message);
    dev_null = std::move(*opened);
    stdin_fd = dev_null.get();
  } else if (::isatty(stdin_fd) == 0) {
    Result<exec::StdinRelay> started = exec::StdinRelay::Start(stdin_fd);
    if (!started) return SetupFailed(std::move(result), started.error().message);
    relay = std::move(*started);
    stdin_fd = relay.command_end();
  }
  exec::StdioFds stdio = exec::MakeStdio(*pipes, stdin_fd);
  // Output that nothing of cordon's needs to see, bound for a pipe of the caller's: the
  // command writes it there itself, as without cordon (decision 0047). No hop through the
  // supervisor, and a reader that goes away gives the command its SIGPIPE.
  const bool stdout_given = !request.capture_output && exec::GivenDirectly(request.stdout_fd);
  const bool stderr_given = !request.capture_output && exec::GivenDirectly(request.stderr_fd);
  if (stdout_given) stdio.stdout_fd = request.stdout_fd;
  if (stderr_given) stdio.stderr_fd = request.stderr_fd;
  // The memory and process limits of the whole tree: a cgroup of this run, which the command
  // process joins first and which is killed and removed when the run ends.
  std::unique_ptr<limits::RunCgroup> cgroup;
  if (plan.limits.needs_cgroup()) {
    Result<std::unique_ptr<limits::RunCgroup>> created =
        limits::RunCgroup::Create(limits_support.cgroups, plan.limits.cgroup);
    if (!created) return SetupFailed(std::move(result), created.error().message);
    cgroup = std::move(*created);
  }
  const limits::CgroupAttach attach = cgroup ? cgroup->attach() : limits::CgroupAttach{};
  // Until the run is reaped, the session prepares no sandbox behind it (zygote_slot.h).
  const zygote::ZygoteSlot::RunScope busy(zygote);
  // The backend the plan's assessment chose (session/backend_choice.h).
  Result<exec::LaunchedProcess> launched =
      plan.sandboxed ? session::LaunchSandboxed(backends, zygote, plan, stdio, attach)
                     : exec::SpawnUnsandboxed(plan, stdio, attach);
  // Our copies of the write ends must go now, or the supervisor would never see EOF.
  pipes->CloseWriteEnds();
  dev_null.Reset();
  relay.CloseCommandEnd();
  if (!relay.running()) fds.stdin_fd.Reset();  // the command has its copy (take_fds)
  if (!launched && launched.error().code == ErrorCode::kCommandNotFound) {
    return CommandNotFound(std::move(result), plan, launched.error().errno_value);
  }
  if (!launched) return SetupFailed(std::move(result), launched.error().message);

  exec::SuperviseOptions options;
  options.timeout = timeout;
  options.output_cap = output_cap;
  options.capture_output = request.capture_output;
  options.on_output = on_output;
  options.sinks = {stdout_given ? -1 : request.stdout_fd, stderr_given ? -1 : request.stderr_fd};
  if (take_fds) {
    // The supervisor closes each as its stream ends (SuperviseOptions::own_sinks); one given to
    // the command stays in `fds`, closed when the run is over.
    options.own_sinks = true;
    options.sinks = {stdout_given ? -1 : fds.stdout_fd.Release(),
                     stderr_given ? -1 : fds.stderr_fd.Release()};
  }
  if (stdout_given) pipes->stdout_read.Reset();
  if (stderr_given) pipes->stderr_read.Reset();
  options.cancel_fd = request.cancel_fd;
  options.cgroup = cgroup.get();
  options.cpu_limited = plan.limits.rlimits.cpu_seconds != 0;
  RunResult supervised = exec::Supervise(
      std::move(*launched),
      exec::OutputReaders{std::move(pipes->stdout_read), std::move(pipes->stderr_read)}, options);
  // The relay reads the caller's stdin until here; both go before the session may prepare.
  relay = exec::StdinRelay();
  fds.stdin_fd.Reset();
  supervised.decision = std::move(result.decision);
  supervised.enforcement = std::move(result.enforcement);
  return supervised;
}

// Caller::before_start, called at most once: before the first thing a run creates.
class StartGate {
 public:
  explicit StartGate(const session::Caller& caller) : caller_(caller) {}
  Result<void> Pass() {
    if (passed_ || !caller_.before_start) return {};
    passed_ = true;
    return caller_.before_start();
  }

 private:
  const session::Caller& caller_;
  bool passed_ = false;
};

}  // namespace

RunResult Session::Run(const CommandRequest& request, const OutputCallback& on_output) const {
  return session::RunFor(*this, request, {}, on_output);
}

RunResult session::RunFor(const Session& session, const CommandRequest& request,
                          const Caller& caller, const OutputCallback& on_output) {
  const Clock::time_point start = Clock::now();
  const Session::State& state = SessionInternals::StateOf(session);
  // Caller::take_fds: ours from here, closed on whatever path the run takes.
  CallerFds fds;
  if (caller.take_fds) {
    fds.stdin_fd = core::UniqueFd(request.stdin_fd);
    fds.stdout_fd = core::UniqueFd(request.stdout_fd);
    fds.stderr_fd = core::UniqueFd(request.stderr_fd);
  }
  RunResult result = [&]() -> RunResult {
    RunResult r;
    Result<std::string> text = session::PolicyText(request);
    if (!text) return SetupFailed(std::move(r), text.error().message);

    r.decision = state.policy.Evaluate(*text);
    if (!r.decision.allowed()) {
      r.status = RunStatus::kDenied;
      return r;
    }

    Result<std::filesystem::path> cwd = session::ResolveCwd(request.cwd, state.workspace);
    if (!cwd) return SetupFailed(std::move(r), cwd.error().message);
    Result<std::chrono::milliseconds> timeout =
        session::EffectiveTimeout(request, state.config.limits.timeout);
    if (!timeout) return SetupFailed(std::move(r), timeout.error().message);

    plan::PlanRequest plan_request;
    plan_request.argv = session::CommandArgv(request);
    plan_request.workspace = state.workspace;
    plan_request.workspace_id = state.workspace_id;
    plan_request.writable_root_ids = state.writable_root_ids;
    plan_request.cwd = *cwd;
    plan_request.caller_env = caller.env ? *caller.env : session::CallerEnvironment();
    plan_request.caller_home = caller.home ? *caller.home : session::CallerHome();
    plan_request.caches = state.caches.get();
    plan_request.tool_cache = session::PrepareToolCache(
        state.config.sandbox, plan_request.caller_env, plan_request.caller_home, state.workspace);
    StartGate gate(caller);
    // Fail closed: a plan that cannot give every requested guarantee runs nothing, and leaves
    // nothing on the host (planned, and the gate passed, before any placeholder is made).
    Result<plan::LaunchPlan> plan =
        plan::Plan(state.config, state.features, plan_request, state.backends.probes);
    if (!plan) return SetupFailed(std::move(r), plan.error().message);
    r.enforcement = plan->enforcement;
    if (Result<void> go = gate.Pass(); !go) return SetupFailed(std::move(r), go.error().message);
    // The absent .git and host-run files: a placeholder on the host for this command alone,
    // removed when it is done (after the whole tree is reaped), covered inside by the backend.
    plan::HostPlaceholders placeholders;
    if (!plan->placeholders.empty()) {
      Result<plan::HostPlaceholders> held =
          plan::HostPlaceholders::Hold(plan->placeholders, state.placeholder_records);
      if (!held) return SetupFailed(std::move(r), held.error().message);
      placeholders = std::move(*held);
      plan->placeholders = placeholders.covered();
    }

    RunResult ran = LaunchAndSupervise(state.backends, state.zygote, state.features.limits, *plan,
                                       request, caller.take_fds, fds, *timeout,
                                       state.config.limits.output_bytes, on_output, std::move(r));
    plan::ExplainFileDenials(*plan, plan_request.caller_home, ran.denials);
    return ran;
  }();
  session::AddRunDenials(result);
  result.duration = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  return result;
}

}  // namespace cordon
