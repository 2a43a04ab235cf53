// The pool manager of a session's zygote (zygote.h, ADR 0010) and prepared commands: what a
// Session holds. Built on every platform (without a zygote elsewhere than on Linux: it then
// serves nothing). Off unless the session is long-lived (SessionOptions: the run server's and
// `cordon mcp`'s sessions are); the zygote is started with the first sandboxed command whose
// plan allows it, rebuilt when its holder died or a command's plan no longer fits it (then
// that command runs one-shot).
//
// Prepared commands (ADR 0023): once a command has shown the session's plan shape, a filler
// thread of the session keeps up to SessionOptions::prepared_commands sandboxes of that shape
// built ahead (prepared_command.h); a command that fits one starts in it, and the filler builds
// the next one behind it. With none ready, or for a plan of another shape, the command joins
// the zygote itself as before. The filler prepares only once none of the session's commands
// has been launched or supervised for 20 ms: preparing forks the server (its page tables are
// copied, and every page it writes afterwards is copied on write until the prepared process
// execs), which would slow down the commands it was meant to speed up.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "cordon/error.h"
#include "cordon/session.h"
#include "exec/launched_process.h"
#include "limits/cgroup.h"
#include "plan/launch_plan.h"

namespace cordon::zygote {

class Zygote;
class PreparedCommand;

// How many commands of this process were launched through a zygote (for tests and stats),
// and how many of those started in a prepared command.
std::uint64_t ZygoteLaunches();
std::uint64_t PreparedLaunches();
// How many zygotes (namespace holders) this process's sessions built, rebuilds included.
std::uint64_t ZygoteStarts();
// Prepared commands ready right now, over all sessions of the process (for tests), and how
// often a session's commands changed shape, which discards the ready ones (a credential file
// created, an entry added to a directory whose listing the plan's Landlock rules hold).
std::uint64_t PreparedReady();
std::uint64_t PreparedShapeChanges();
// How many prepared commands were taken for a command of their shape but could not start it
// (a mask of their view detached by a host change since they were built, or the sandbox
// gone): the command started another way.
std::uint64_t PreparedViewsLost();

class ZygoteSlot {
 public:
  // Serves nothing unless `options.long_lived` (the caller then launches one-shot). Implicit:
  // the session's state is built in place from its options.
  ZygoteSlot(SessionOptions options);  // NOLINT(google-explicit-constructor)
  ~ZygoteSlot();  // stops the filler and kills the prepared commands nobody took
  ZygoteSlot(const ZygoteSlot&) = delete;
  ZygoteSlot& operator=(const ZygoteSlot&) = delete;
  // Not fork-safe: a child process must not use or destroy a long-lived session its parent
  // ran commands in (the filler thread and the sandboxes are the parent's).

  // Launches `plan` through the session's zygote (in a prepared command when one fits),
  // starting or rebuilding it when needed. nullopt when the zygote cannot serve this plan:
  // the caller launches one-shot. `cgroup`: the run's cgroup, joined by the command process
  // (linux_native::Launch); a plan with one never uses a prepared command.
  std::optional<Result<exec::LaunchedProcess>> Launch(const plan::LaunchPlan& plan,
                                                      const exec::StdioFds& stdio,
                                                      const limits::CgroupAttach& cgroup = {});

  // Marks a run of this session in progress (from before its launch until it was reaped): the
  // filler waits for none to be.
  class RunScope {
   public:
    explicit RunScope(ZygoteSlot& slot);
    ~RunScope();
    RunScope(const RunScope&) = delete;
    RunScope& operator=(const RunScope&) = delete;

   private:
    ZygoteSlot& slot_;
  };

 private:
  // With mutex_ held: the session's zygote for `plan`, started or rebuilt when needed (also
  // when it is `not_intact`, found so by the caller); null when none can serve it.
  std::shared_ptr<const Zygote> ZygoteFor(const plan::LaunchPlan& plan,
                                          const Zygote* not_intact = nullptr);
  // With mutex_ held: a ready prepared command that fits `plan`, if any; and from now on the
  // filler prepares `plan`'s shape.
  std::shared_ptr<PreparedCommand> TakePrepared(const plan::LaunchPlan& plan);
  // With mutex_ held: kills `unused` now and leaves reaping it to the filler.
  void Bury(std::shared_ptr<PreparedCommand> unused);
  void Fill();  // the filler thread

  const SessionOptions options_;
  std::mutex mutex_;
  std::shared_ptr<const Zygote> zygote_;
  bool unusable_ = false;  // the kernel refused a holder: this session runs one-shot
  // A prepared command's view had more mounts than its last check can hold (E2BIG): none
  // are prepared any more; commands join the zygote, which checks without a bound.
  bool too_many_mounts_ = false;

  std::condition_variable wake_;
  std::thread filler_;
  bool stopping_ = false;
  std::optional<plan::LaunchPlan> shape_;  // what the filler prepares
  // shared_ptr, not unique_ptr: the type is complete only where the zygote is built (Linux).
  std::deque<std::shared_ptr<PreparedCommand>> ready_;
  std::vector<std::shared_ptr<PreparedCommand>> graveyard_;  // killed, not yet reaped
  int failures_ = 0;     // preparing failed this often in a row for shape_ (it stops at 3)
  int active_runs_ = 0;  // RunScopes alive
  std::chrono::steady_clock::time_point last_run_end_;  // when the last RunScope ended
};

}  // namespace cordon::zygote
