// HelperThread: a task runs beside its caller, off the caller's CPU; one the helper has
// not begun is taken back by Wait; what the task wrote is the caller's to read after Wait.
#include "server/helper_thread.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

namespace cordon::server {
namespace {

using namespace std::chrono_literals;

// Posts `task` and lets the helper begin it before waiting (Wait would take back a task the
// helper has not begun yet). The helper's thread id.
template <class Task>
int OnHelper(HelperThread& helper, Task task) {
  std::atomic<int> tid{0};
  helper.Post([&] {
    task();
    tid = ::gettid();
  });
  for (int i = 0; i < 10000 && tid.load() == 0; ++i) std::this_thread::sleep_for(1ms);
  helper.Wait();
  return tid.load();
}

TEST(HelperThreadTest, ATaskRunsOnAnotherThreadAndWaitShowsWhatItWrote) {
  HelperThread helper;
  std::string written;
  const int ran_on = OnHelper(helper, [&] { written = "from the helper"; });
  EXPECT_FALSE(helper.pending());
  EXPECT_EQ(written, "from the helper");
  EXPECT_NE(ran_on, ::gettid());
  // The thread is kept: the next task runs on it too.
  EXPECT_EQ(OnHelper(helper, [] {}), ran_on);
  EXPECT_EQ(helper.taken_back(), 0);
  // Wait, whoever ran the task, shows what it wrote.
  helper.Post([&] { written = "again"; });
  EXPECT_TRUE(helper.pending());
  helper.Wait();
  EXPECT_EQ(written, "again");
}

TEST(HelperThreadTest, DoneFdIsReadableOnceTheTaskHasFinished) {
  HelperThread helper;
  std::atomic<bool> release{false};
  helper.Post([&] {
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  if (!helper.pending()) GTEST_SKIP() << "no helper thread could be started";
  pollfd p{helper.done_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 50), 0) << "readable while the task still runs";
  release = true;
  EXPECT_EQ(::poll(&p, 1, 5000), 1);
  helper.Wait();
}

// The helper held in a signal handler (sent to its thread alone) cannot begin the task.
std::atomic<bool> held{false};
std::atomic<bool> release_held{false};
void Hold(int) {
  held = true;
  while (!release_held.load()) {
    timespec t{0, 1'000'000};
    ::nanosleep(&t, nullptr);
  }
}

TEST(HelperThreadTest, WaitTakesBackATaskTheHelperHasNotBegun) {
  HelperThread helper;
  const int helper_tid = OnHelper(helper, [] {});
  ASSERT_GT(helper_tid, 0);
  ASSERT_NE(helper_tid, ::gettid());
  struct sigaction action {};
  struct sigaction saved {};
  action.sa_handler = Hold;
  ASSERT_EQ(::sigaction(SIGUSR2, &action, &saved), 0);
  held = false;
  release_held = false;
  ASSERT_EQ(::tgkill(::getpid(), helper_tid, SIGUSR2), 0);
  while (!held.load()) std::this_thread::sleep_for(1ms);

  int ran_on = 0;
  helper.Post([&] { ran_on = ::gettid(); });
  helper.Wait();  // not begun: run here
  EXPECT_EQ(ran_on, ::gettid());
  EXPECT_EQ(helper.taken_back(), 1);
  // Drop: a task not begun is not run at all.
  bool dropped_ran = false;
  helper.Post([&] { dropped_ran = true; });
  helper.Drop();
  EXPECT_FALSE(dropped_ran);
  EXPECT_EQ(helper.taken_back(), 2);

  release_held = true;
  // The twin: with the helper free again, the next task is its.
  EXPECT_EQ(OnHelper(helper, [] {}), helper_tid);
  EXPECT_EQ(helper.taken_back(), 2);
  ::sigaction(SIGUSR2, &saved, nullptr);
}

TEST(HelperThreadTest, TheHelperIsMovedOffTheCpuItsCallerIsOn) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "one CPU: nowhere else to run";
  HelperThread helper;
  const int helper_tid = OnHelper(helper, [] {});  // the first starts the thread
  bool checked = false;
  // The caller may migrate between its check and the helper's move: try until it stays put.
  for (int attempt = 0; attempt < 100 && !checked; ++attempt) {
    const int before = ::sched_getcpu();
    std::atomic<int> ran_on_cpu{-1};
    helper.Post([&] { ran_on_cpu = ::sched_getcpu(); });
    const int after = ::sched_getcpu();
    for (int i = 0; i < 10000 && ran_on_cpu.load() < 0; ++i) std::this_thread::sleep_for(1ms);
    helper.Wait();
    if (before != after) continue;
    cpu_set_t helpers;
    CPU_ZERO(&helpers);
    ASSERT_EQ(::sched_getaffinity(helper_tid, sizeof helpers, &helpers), 0);
    EXPECT_FALSE(CPU_ISSET(before, &helpers));
    EXPECT_NE(ran_on_cpu.load(), before);
    checked = true;
  }
  EXPECT_TRUE(checked) << "the caller never stayed on one CPU across a Post";
}

// The twin: a caller that may use one CPU only leaves its helper there (it still runs).
TEST(HelperThreadTest, ACallerOnOneCpuSharesItWithItsHelper) {
  cpu_set_t saved;
  ASSERT_EQ(::sched_getaffinity(0, sizeof saved, &saved), 0);
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(::sched_getcpu(), &one);
    ASSERT_EQ(::sched_setaffinity(0, sizeof one, &one), 0);
    HelperThread helper;  // its thread inherits the one CPU
    const int helper_tid = OnHelper(helper, [] {});
    for (int i = 0; i < 3; ++i) {
      std::atomic<int> ran_on_cpu{-1};
      EXPECT_EQ(OnHelper(helper, [&] { ran_on_cpu = ::sched_getcpu(); }), helper_tid);
      EXPECT_TRUE(CPU_ISSET(ran_on_cpu.load(), &one));
    }
    // Its mask was left alone: the one CPU, not an empty set (which the kernel would refuse).
    cpu_set_t helpers;
    CPU_ZERO(&helpers);
    ASSERT_EQ(::sched_getaffinity(helper_tid, sizeof helpers, &helpers), 0);
    EXPECT_TRUE(CPU_EQUAL(&helpers, &one));
  }).join();
}

// (One it has not begun is dropped: WaitTakesBackATaskTheHelperHasNotBegun shows Drop.)
TEST(HelperThreadTest, DestroyingTheHelperWaitsForTheTaskItBegan) {
  std::atomic<bool> begun{false};
  std::atomic<bool> finished{false};
  {
    HelperThread helper;
    helper.Post([&] {
      begun = true;
      std::this_thread::sleep_for(50ms);
      finished = true;
    });
    if (!helper.pending()) GTEST_SKIP() << "no helper thread could be started";
    for (int i = 0; i < 10000 && !begun.load(); ++i) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace cordon::server
