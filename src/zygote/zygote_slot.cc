#include "zygote/zygote_slot.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <utility>

#if defined(__linux__)
#include "zygote/prepared_command.h"
#include "zygote/zygote.h"
#endif

namespace cordon::zygote {
namespace {

std::atomic<std::uint64_t> launches{0};
std::atomic<std::uint64_t> starts{0};
std::atomic<std::uint64_t> prepared_launches{0};
std::atomic<std::uint64_t> prepared_ready{0};
std::atomic<std::uint64_t> shape_changes{0};
std::atomic<std::uint64_t> views_lost{0};

// Preparing failed this often in a row for one shape: stop until the shape changes (the
// commands still run, joining the zygote themselves).
constexpr int kMaxPrepareFailures = 3;

// How long the session must have been idle before the filler prepares. A wait (20 ms until
// 2026-12-01) was meant to keep commands that follow each other closely from meeting a
// preparation in progress; measured on the 2-vCPU VM (mcp_bench, two runs each), preparing at
// once is better: MCP round trips back to back 1.75 / 1.75 ms over bare against 2.25 / 2.06 ms,
// one call always in flight 2.76 / 2.72 against 2.59 / 3.10 ms, calls 50 ms apart unchanged
// (they find a prepared sandbox either way); `cordon run` through a run server back to back
// 2.0-2.4 against 3.4 ms. The next command usually arrives after the preparation finished.
constexpr std::chrono::milliseconds kIdleBeforePreparing{0};

}  // namespace

std::uint64_t ZygoteLaunches() { return launches.load(); }
std::uint64_t ZygoteStarts() { return starts.load(); }
std::uint64_t PreparedLaunches() { return prepared_launches.load(); }
std::uint64_t PreparedReady() { return prepared_ready.load(); }
std::uint64_t PreparedShapeChanges() { return shape_changes.load(); }
std::uint64_t PreparedViewsLost() { return views_lost.load(); }

ZygoteSlot::ZygoteSlot(SessionOptions options) : options_(options) {}

ZygoteSlot::RunScope::RunScope(ZygoteSlot& slot) : slot_(slot) {
  std::lock_guard lock(slot_.mutex_);
  ++slot_.active_runs_;
}

ZygoteSlot::RunScope::~RunScope() {
  bool idle = false;
  {
    std::lock_guard lock(slot_.mutex_);
    idle = --slot_.active_runs_ == 0;
    slot_.last_run_end_ = std::chrono::steady_clock::now();
  }
  if (idle) slot_.wake_.notify_all();
}

#if !defined(__linux__)

ZygoteSlot::~ZygoteSlot() = default;

std::optional<Result<exec::LaunchedProcess>> ZygoteSlot::Launch(
    const plan::LaunchPlan& plan, const exec::StdioFds& stdio, const limits::CgroupAttach& cgroup) {
  // The zygote holds Linux namespaces (ADR 0010): nothing to join elsewhere.
  (void)plan;
  (void)stdio;
  (void)cgroup;
  std::lock_guard lock(mutex_);
  unusable_ = true;
  return std::nullopt;
}

#else

ZygoteSlot::~ZygoteSlot() {
  std::deque<std::shared_ptr<PreparedCommand>> unused;
  std::vector<std::shared_ptr<PreparedCommand>> dead;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    unused.swap(ready_);
    dead.swap(graveyard_);
    prepared_ready.fetch_sub(unused.size());
  }
  wake_.notify_all();
  unused.clear();  // killed and reaped
  dead.clear();
  if (filler_.joinable()) filler_.join();
  graveyard_.clear();  // what the filler buried after we looked
}

std::shared_ptr<const Zygote> ZygoteSlot::ZygoteFor(const plan::LaunchPlan& plan,
                                                    const Zygote* not_intact) {
  if (unusable_) return nullptr;
  if (zygote_ && zygote_.get() != not_intact && zygote_->Alive() && zygote_->Fits(plan) &&
      zygote_->Intact()) {
    return zygote_;
  }
  // A plan of another shape (the workspace gained a .git, a hidden path appeared), a view a
  // host change detached a mask from after the plan was made, or a dead holder: build anew.
  // Commands still running keep the old one alive until done.
  // Born into the old holder's network namespace when it can be: a server a command of the
  // session started there stays reachable from the commands after the change.
  Result<std::unique_ptr<Zygote>> started = Zygote::Start(plan, zygote_.get());
  if (!started) {
    // The one-shot launch reports whatever the kernel refuses, with its own step. A plan whose
    // mounts the zygote cannot replay (kUnavailable) says nothing about the next plan, nor does
    // a mount target the host changed since that plan (gone, replaced, another type: the
    // filler builds for the session's latest plan, which the host may have changed meanwhile);
    // a holder the kernel refused otherwise would be refused again: stop trying.
    zygote_.reset();
    const int err = started.error().errno_value;
    const bool host_changed =
        err == ENOENT || err == ENOTDIR || err == EISDIR || err == ELOOP || err == ESTALE;
    if (started.error().code != ErrorCode::kUnavailable && !host_changed) unusable_ = true;
    return nullptr;
  }
  zygote_ = std::move(*started);
  starts.fetch_add(1);
  return zygote_;
}

void ZygoteSlot::Bury(std::shared_ptr<PreparedCommand> unused) {
  // Killed now (a signal); reaped by the filler, off the command's path and outside the lock.
  unused->Kill();
  graveyard_.push_back(std::move(unused));
}

std::shared_ptr<PreparedCommand> ZygoteSlot::TakePrepared(const plan::LaunchPlan& plan) {
  if (options_.prepared_commands <= 0 || too_many_mounts_ || !Preparable(plan)) return nullptr;
  std::shared_ptr<PreparedCommand> taken;
  while (!ready_.empty() && !taken) {
    std::shared_ptr<PreparedCommand> next = std::move(ready_.front());
    ready_.pop_front();
    prepared_ready.fetch_sub(1);
    if (next->Alive() && SamePreparedShape(next->shape(), plan)) {
      taken = std::move(next);
    } else {
      Bury(std::move(next));
    }
  }
  if (!shape_ || !SamePreparedShape(*shape_, plan)) {
    // The session's commands now look like this one: prepare that shape from here on.
    if (shape_) shape_changes.fetch_add(1);
    prepared_ready.fetch_sub(ready_.size());
    for (auto& stale : ready_) Bury(std::move(stale));
    ready_.clear();
    shape_ = plan;
    failures_ = 0;
  }
  if (!filler_.joinable()) filler_ = std::thread([this] { Fill(); });
  wake_.notify_all();
  return taken;
}

void ZygoteSlot::Fill() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] {
      return stopping_ || !graveyard_.empty() ||
             (shape_ && !unusable_ && !too_many_mounts_ && active_runs_ == 0 &&
              failures_ < kMaxPrepareFailures &&
              ready_.size() < static_cast<std::size_t>(options_.prepared_commands));
    });
    if (stopping_) return;
    if (!graveyard_.empty()) {
      std::vector<std::shared_ptr<PreparedCommand>> dead;
      dead.swap(graveyard_);
      lock.unlock();
      dead.clear();  // reaped
      lock.lock();
      continue;
    }
    // Idle long enough? Otherwise wait out the rest (a run that starts meanwhile, or the
    // session's end, wakes us and the loop starts over).
    const auto idle_from = last_run_end_ + kIdleBeforePreparing;
    if (std::chrono::steady_clock::now() < idle_from) {
      wake_.wait_until(lock, idle_from);
      continue;
    }
    const plan::LaunchPlan shape = *shape_;
    std::shared_ptr<const Zygote> current = ZygoteFor(shape);
    if (!current) {
      failures_ = kMaxPrepareFailures;
      continue;
    }
    lock.unlock();
    // This thread is the prepared sandboxes' parent: they die with it (the parent-death signal
    // follows the thread), and it lives as long as the session.
    Result<std::shared_ptr<PreparedCommand>> prepared = current->Prepare(shape);
    lock.lock();
    if (!prepared) {
      ++failures_;
      continue;
    }
    failures_ = 0;
    // Not kept when the shape changed, or the session stopped preparing, while it was built.
    if (!stopping_ && !too_many_mounts_ && shape_ && SamePreparedShape(*shape_, shape)) {
      ready_.push_back(std::move(*prepared));
      prepared_ready.fetch_add(1);
    } else {
      Bury(std::move(*prepared));
    }
  }
}

std::optional<Result<exec::LaunchedProcess>> ZygoteSlot::Launch(
    const plan::LaunchPlan& plan, const exec::StdioFds& stdio, const limits::CgroupAttach& cgroup) {
  if (!options_.long_lived || !plan.sandboxed || !plan.namespaces.user || !plan.namespaces.mount ||
      !plan.namespaces.pid) {
    return std::nullopt;
  }
  // RLIMIT_NPROC counts per user namespace: in the session's shared one the holder and every
  // concurrent command would share the command's budget. Such a command runs one-shot, in a
  // user namespace of its own.
  if (plan.limits.rlimits.processes != 0) return std::nullopt;
  // Network by domain: the resolver's socket is bound in the command's own network namespace
  // and answered for this run's supervisor alone (exec/resolver_process.h), so the command runs
  // one-shot, in a network namespace of its own, not in the session's shared one.
  if (plan.domains) return std::nullopt;
  std::shared_ptr<PreparedCommand> prepared;
  {
    std::lock_guard lock(mutex_);
    if (unusable_) return std::nullopt;
    prepared = TakePrepared(plan);
  }
  if (prepared) {
    Result<exec::LaunchedProcess> started = prepared->Start(plan, stdio);
    // A view of more mounts than a prepared command can check (E2BIG): so is every one this
    // session would prepare; it prepares none from here on.
    if (!started && started.error().code == ErrorCode::kUnavailable &&
        started.error().errno_value == E2BIG) {
      std::lock_guard lock(mutex_);
      too_many_mounts_ = true;
      prepared_ready.fetch_sub(ready_.size());
      for (auto& unused : ready_) Bury(std::move(unused));
      ready_.clear();
      wake_.notify_all();
    }
    // kUnavailable: that sandbox was gone before it took the command; nothing ran.
    if (!started && started.error().code == ErrorCode::kUnavailable) views_lost.fetch_add(1);
    if (started || started.error().code != ErrorCode::kUnavailable) {
      if (started) {
        launches.fetch_add(1);
        prepared_launches.fetch_add(1);
      }
      return started;
    }
  }
  std::shared_ptr<const Zygote> current;
  {
    std::lock_guard lock(mutex_);
    if (zygote_ && zygote_->Alive() && zygote_->Fits(plan)) current = zygote_;
  }
  // Whether its view still has every mask is read outside the lock: concurrent commands of
  // the session do not wait for each other's reads of /proc. One that lost a mask is built
  // anew (unless another command did that meanwhile).
  if (!current || !current->Intact()) {
    std::lock_guard lock(mutex_);
    current = ZygoteFor(plan, current.get());
  }
  if (!current) return std::nullopt;
  Result<exec::LaunchedProcess> launched = current->Launch(plan, stdio, cgroup);
  if (launched) launches.fetch_add(1);
  return launched;
}

#endif

}  // namespace cordon::zygote
