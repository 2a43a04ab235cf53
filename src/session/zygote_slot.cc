#include "session/zygote_slot.h"

#include <atomic>

#include "plan/root_only_watch.h"
#if defined(__linux__)
#include "zygote/zygote.h"
#endif

namespace cordon::session {
namespace {

std::atomic<bool> long_lived{false};
std::atomic<std::uint64_t> launches{0};

}  // namespace

void SetLongLivedSessions(bool enabled) {
  long_lived.store(enabled);
  // A long-lived process plans many commands: keep the root-only scan of /etc watched instead
  // of walking it per plan (decision 0022).
  plan::SetRootOnlyWatch(enabled);
}
bool LongLivedSessions() { return long_lived.load(); }
std::uint64_t ZygoteLaunches() { return launches.load(); }

ZygoteSlot::ZygoteSlot() = default;
ZygoteSlot::~ZygoteSlot() = default;

std::optional<Result<exec::LaunchedProcess>> ZygoteSlot::Launch(
    const plan::LaunchPlan& plan, const exec::StdioFds& stdio, const limits::CgroupAttach& cgroup) {
#if !defined(__linux__)
  // The zygote holds Linux namespaces (ADR 0010): nothing to join elsewhere.
  (void)plan;
  (void)stdio;
  (void)cgroup;
  std::lock_guard lock(mutex_);
  unusable_ = true;
  return std::nullopt;
#else
  if (!LongLivedSessions() || !plan.sandboxed || !plan.namespaces.user || !plan.namespaces.mount ||
      !plan.namespaces.pid) {
    return std::nullopt;
  }
  // RLIMIT_NPROC counts per user namespace: in the session's shared one the holder and every
  // concurrent command would share the command's budget. Such a command runs one-shot, in a
  // user namespace of its own.
  if (plan.limits.rlimits.processes != 0) return std::nullopt;
  std::shared_ptr<const zygote::Zygote> current;
  {
    std::lock_guard lock(mutex_);
    if (unusable_) return std::nullopt;
    if (zygote_ && zygote_->Alive() && zygote_->Fits(plan)) {
      current = zygote_;
    } else {
      // A plan of another shape (the workspace gained a .git, a hidden path appeared) or a
      // dead holder: build anew. Commands still running keep the old one alive until done.
      Result<std::unique_ptr<zygote::Zygote>> started = zygote::Zygote::Start(plan);
      if (!started) {
        // The one-shot launch reports whatever the kernel refuses, with its own step. A plan
        // whose mounts the zygote cannot replay (kUnavailable) says nothing about the next
        // plan; a holder the kernel refused would be refused again: stop trying.
        zygote_.reset();
        if (started.error().code != ErrorCode::kUnavailable) unusable_ = true;
        return std::nullopt;
      }
      zygote_ = std::move(*started);
      current = zygote_;
    }
  }
  Result<exec::LaunchedProcess> launched = current->Launch(plan, stdio, cgroup);
  if (launched) launches.fetch_add(1);
  return launched;
#endif
}

}  // namespace cordon::session
