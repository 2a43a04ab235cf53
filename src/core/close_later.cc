#include "core/close_later.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

namespace cordon::core {
namespace {

class Closer {
 public:
  void Add(UniqueFd fd) {
    {
      std::lock_guard lock(mutex_);
      if (!started_) {
        try {
          // Never joined: the closer lives as long as the process (it is never destroyed).
          std::thread([this] { Loop(); }).detach();
          started_ = true;
        } catch (const std::system_error&) {
          return;  // no thread to be had (a process limit): `fd` is closed here, now
        }
      }
      queue_.push_back(std::move(fd));
      ++added_;
    }
    work_.notify_one();
  }

  void Wait() {
    std::unique_lock lock(mutex_);
    const std::uint64_t target = added_;
    done_.wait(lock, [&] { return closed_ >= target; });
  }

 private:
  void Loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return !queue_.empty(); });
      UniqueFd next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      next.Reset();  // the slow part, outside the lock
      lock.lock();
      ++closed_;
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::deque<UniqueFd> queue_;
  std::uint64_t added_ = 0;
  std::uint64_t closed_ = 0;
  bool started_ = false;
};

// Never destroyed: its thread may still run while static destructors do.
Closer& TheCloser() {
  static Closer* closer = new Closer();
  return *closer;
}

}  // namespace

void CloseLater(UniqueFd fd) {
  if (!fd.valid()) return;
  TheCloser().Add(std::move(fd));
}

void WaitForClosed() { TheCloser().Wait(); }

}  // namespace cordon::core
