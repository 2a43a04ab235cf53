// One task at a time on a thread beside the caller's, for work whose result the caller needs
// later but need not wait for now: the run server checks a client's process (~0.3 ms of /proc
// reads) while it reads, resolves and plans that client's request (decision 0032).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/unique_fd.h"

namespace cordon::server {

// Owned and used by one thread. Not copyable or movable (its thread refers to it).
//
// The helper runs on another CPU than the one the caller is on when it posts (when the caller
// may use more than one): woken on the caller's own CPU, as the kernel tends to place it, it
// would only run once the caller blocks, and nothing would overlap. A task the helper has not
// begun when the caller waits for it is taken back and run by the caller, so a busy machine
// never makes the caller wait for a helper that has not been given a CPU.
class HelperThread {
 public:
  HelperThread();
  // Waits for a task the helper has begun (drops one it has not), then ends the thread.
  ~HelperThread();
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  // Starts `task` beside the caller; the thread is started on first use. Runs it here, before
  // returning, when no thread or eventfd can be had (a process limit). A task posted before
  // must have been waited for.
  void Post(std::function<void()> task);

  // Whether a posted task has not been waited for yet.
  bool pending() const { return pending_; }

  // Readable once the pending task has finished (for poll(2) beside other descriptors).
  int done_fd() const { return done_.get(); }

  // Returns once the pending task has finished (at once when none is pending), having run it
  // here if the helper had not begun it: what it wrote is then visible to the caller.
  void Wait();

  // Like Wait, for a task whose result is no longer wanted: one the helper has not begun is
  // dropped instead of run here.
  void Drop();

  // How many tasks the caller took back, to run or drop (for tests).
  int taken_back() const { return taken_back_; }

 private:
  void Loop();
  void MoveOffCallersCpu();
  void Finish(bool run_if_not_begun);

  core::UniqueFd done_;  // eventfd: 1 per task the helper finished
  std::mutex mutex_;
  std::condition_variable work_;
  std::function<void()> task_;  // guarded by mutex_: posted, not yet begun
  bool stopping_ = false;       // guarded by mutex_
  int tid_ = 0;                 // guarded by mutex_: the helper's thread id, once it runs
  int off_cpu_ = -1;            // the CPU the helper was last moved off (the caller's alone)
  bool pending_ = false;        // the caller's alone
  int taken_back_ = 0;          // the caller's alone
  std::thread thread_;
};

}  // namespace cordon::server
