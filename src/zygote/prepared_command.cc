#include "zygote/prepared_command.h"

#include <cerrno>
#include <utility>

#include "exec/process_control.h"
#include "linux/child_context.h"
#include "linux/error_pipe.h"
#include "linux/exec_request.h"
#include "linux/launcher.h"
#include "plan/shape.h"
#include "zygote/cover_relay.h"
#include "zygote/zygote.h"

namespace cordon::zygote {
namespace {

using linux_native::ExecFailure;
using linux_native::ExecFailureStep;

linux_native::Step ToStep(std::uint32_t step) {
  switch (static_cast<ExecFailureStep>(step)) {
    case ExecFailureStep::kStdio:
      return linux_native::Step::kStdio;
    case ExecFailureStep::kChdir:
      return linux_native::Step::kChdir;
    case ExecFailureStep::kExecve:
      return linux_native::Step::kExecve;
    case ExecFailureStep::kRequest:
    case ExecFailureStep::kMounts:
      break;
  }
  return linux_native::Step::kExecStub;
}

}  // namespace

bool Preparable(const plan::LaunchPlan& plan) {
  return !plan.limits.needs_cgroup() && plan.limits.rlimits.open_files == 0;
}

bool SamePreparedShape(const plan::LaunchPlan& a, const plan::LaunchPlan& b) {
  return plan::SamePreparedShape(a, b) && Preparable(a) && Preparable(b);
}

PreparedCommand::PreparedCommand(exec::LaunchedProcess launched, core::UniqueFd request,
                                 plan::LaunchPlan shape, core::UniqueFd mount_ns)
    : launched_(std::move(launched)),
      request_(std::move(request)),
      shape_(std::move(shape)),
      mount_ns_(std::move(mount_ns)) {}

PreparedCommand::~PreparedCommand() { Discard(); }

void PreparedCommand::Discard() {
  mount_ns_.Reset();
  if (launched_.pid <= 0) return;
  exec::KillTree(launched_);
  (void)exec::Reap(launched_);
  launched_.pid = -1;
}

void PreparedCommand::Kill() const {
  if (launched_.pid > 0) exec::KillTree(launched_);
}

bool PreparedCommand::Alive() const {
  if (launched_.pid <= 0) return false;
  const Result<bool> exited = exec::HasExited(launched_);
  return exited && !*exited;
}

Result<exec::LaunchedProcess> PreparedCommand::Start(const plan::LaunchPlan& plan,
                                                     const exec::StdioFds& stdio) {
  if (launched_.pid <= 0) return Fail(ErrorCode::kUnavailable, "prepared command: already used");
  if (plan.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "empty command");
  // The command's placeholders were made after this sandbox was built: covered now.
  if (!plan.placeholders.empty()) {
    if (!mount_ns_) {
      Discard();
      return Fail(ErrorCode::kUnavailable,
                  "prepared command: its mount namespace is not held, so the placeholders "
                  "cannot be covered there");
    }
    if (Result<void> covered = CoverInPreparedView(mount_ns_.get(), plan.placeholders, plan.home);
        !covered) {
      Discard();
      return std::unexpected(std::move(covered).error());
    }
  }
  linux_native::ExecRequest request;
  request.cwd = plan.cwd.native();
  request.argv = plan.argv;
  request.env = plan.env;
  request.candidates = linux_native::ExecCandidates(plan.argv.front(), plan.env);
  request.stdio = stdio;
  Result<void> sent = linux_native::SendExecRequest(request_.get(), request);
  Result<std::optional<ExecFailure>> outcome =
      sent ? linux_native::ReadExecOutcome(request_.get())
           : Result<std::optional<ExecFailure>>(std::unexpected(sent.error()));
  if (!outcome || outcome->has_value()) {
    Discard();  // nothing of the command runs any more
    if (!outcome) return std::unexpected(std::move(outcome).error());
    const ExecFailure& failure = **outcome;
    if (static_cast<ExecFailureStep>(failure.step) == ExecFailureStep::kMounts) {
      // A mask of this sandbox was detached after the plan chose it: nothing ran, and the
      // command starts another way (zygote_slot.cc), in a view masked over what is there now.
      // E2BIG: more mounts than the stub can check; every sandbox of the session will have as
      // many, and the slot stops preparing them.
      return Fail(ErrorCode::kUnavailable,
                  failure.err == E2BIG
                      ? "prepared command: its view has more mounts than it can check"
                      : "prepared command: its view lost a mount (a masked file changed on the "
                        "host)",
                  failure.err);
    }
    linux_native::StepReport report;
    report.step = ToStep(failure.step);
    report.err = failure.err;
    return std::unexpected(linux_native::StepError(plan, report));
  }
  request_.Reset();
  // The run's LaunchedProcess holds the namespace from here (namespace_hold.h), nothing else.
  mount_ns_.Reset();
  exec::LaunchedProcess started = std::move(launched_);
  launched_ = exec::LaunchedProcess{};  // pid -1: nothing left to discard
  // The supervisor's rules for this command: its own placeholders came with it.
  started.connect_rules = linux_native::BrokerRules(plan, nullptr);
  return started;
}

}  // namespace cordon::zygote
