#include "server/helper_thread.h"

#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace cordon::server {

HelperThread::HelperThread() : done_(::eventfd(0, EFD_CLOEXEC)) {}

HelperThread::~HelperThread() {
  Drop();
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void HelperThread::Post(std::function<void()> task) {
  if (done_.valid() && !thread_.joinable()) {
    try {
      thread_ = std::thread([this] { Loop(); });
    } catch (const std::system_error&) {
      // no thread to be had: the task runs here
    }
  }
  if (!thread_.joinable()) {
    task();
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = std::move(task);
    MoveOffCallersCpu();
  }
  pending_ = true;
  work_.notify_one();
}

// With mutex_ held. Best effort: the helper may run anywhere the caller may when this fails
// (a seccomp filter, a cpuset that changed), or before the helper has said who it is.
void HelperThread::MoveOffCallersCpu() {
  if (tid_ <= 0) return;
  const int here = ::sched_getcpu();
  if (here < 0 || here >= CPU_SETSIZE || here == off_cpu_) return;  // moved off it already
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  CPU_CLR(here, &allowed);
  if (::sched_setaffinity(tid_, sizeof allowed, &allowed) == 0) off_cpu_ = here;
}

void HelperThread::Wait() { Finish(/*run_if_not_begun=*/true); }

void HelperThread::Drop() { Finish(/*run_if_not_begun=*/false); }

void HelperThread::Finish(bool run_if_not_begun) {
  if (!pending_) return;
  pending_ = false;
  std::function<void()> task;
  {
    std::lock_guard lock(mutex_);
    task = std::move(task_);
    task_ = nullptr;
  }
  if (task) {  // not begun: taken back
    ++taken_back_;
    if (run_if_not_begun) task();
    return;
  }
  std::uint64_t count = 0;
  // The eventfd's counter is only ever 0 or 1 (one task at a time): read blocks until 1.
  while (::read(done_.get(), &count, sizeof count) < 0 && errno == EINTR) {
  }
  // The helper wrote the eventfd holding the mutex: taking it orders the task's writes before
  // the caller's reads.
  std::lock_guard lock(mutex_);
}

void HelperThread::Loop() {
  std::unique_lock lock(mutex_);
  tid_ = ::gettid();
  for (;;) {
    work_.wait(lock, [&] { return stopping_ || task_ != nullptr; });
    if (stopping_) return;
    std::function<void()> task = std::move(task_);
    task_ = nullptr;
    lock.unlock();
    task();
    task = nullptr;  // what it captured goes before the caller hears it is done
    lock.lock();
    const std::uint64_t one = 1;
    (void)!::write(done_.get(), &one, sizeof one);
  }
}

}  // namespace cordon::server
