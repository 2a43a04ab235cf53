// Per-run cgroups on this machine: a memory bomb and a fork bomb under the real supervisor,
// each with a twin that stays within its limits. Needs a usable cgroup (root here: v2, or the
// v1 controllers on a hybrid host); skips with the reason otherwise, fails in CI.
#include "limits/cgroup.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "limited_child.h"
#include "limits/cgroup_files.h"

namespace cordon::limits {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::LimitedRun;
using testing::MustWork;
using testing::RunLimited;
using Clock = std::chrono::steady_clock;

class CgroupRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { support_ = new CgroupSupport(ProbeCgroups()); }
  static void TearDownTestSuite() { delete support_; }

  // The run's cgroup, or nullptr after skipping/failing for a missing controller.
  std::unique_ptr<RunCgroup> Create(const CgroupRequest& request) {
    Result<std::unique_ptr<RunCgroup>> created = RunCgroup::Create(*support_, request);
    if (!created) {
      // Unprivileged, a cgroup is usable only when delegated: skipping is right even in CI.
      if (MustWork() && ::geteuid() == 0) ADD_FAILURE() << created.error().message;
      return nullptr;
    }
    return std::move(*created);
  }

  static std::string Procs(const RunCgroup& cgroup) {
    std::string all;
    for (const auto& path : cgroup.paths())
      all += ReadSmallFile(path / "cgroup.procs").value_or("?");
    return all;
  }

  static CgroupSupport* support_;
};
CgroupSupport* CgroupRun::support_ = nullptr;

#define CREATE_OR_SKIP(var, ...)                                                    \
  std::unique_ptr<RunCgroup> var = Create(__VA_ARGS__);                             \
  if (var == nullptr) GTEST_SKIP() << "no usable cgroup here: " << support_->notes; \
  static_assert(true)

TEST_F(CgroupRun, AMemoryBombIsOomKilledAndReportedAsTheMemoryLimit) {
  CREATE_OR_SKIP(cgroup, {.memory_bytes = 64 << 20});
  LimitedRun run;
  run.cgroup = cgroup.get();
  // tail looks for the last newline of an endless stream of zero bytes: it keeps it all.
  const auto start = Clock::now();
  RunResult r = RunLimited({"/usr/bin/tail", "/dev/zero"}, run, cgroup.get());
  EXPECT_EQ(r.status, RunStatus::kSignaled) << r.error;
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(r.limit, RunLimit::kMemory);
  EXPECT_THAT(r.limits_reached, Contains(RunLimit::kMemory));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(15));
  const auto paths = cgroup->paths();
  EXPECT_TRUE(cgroup->Remove().has_value());
  for (const auto& path : paths) EXPECT_FALSE(std::filesystem::exists(path)) << path;
}

TEST_F(CgroupRun, ACommandWithinItsMemoryLimitRunsNormally) {
  CREATE_OR_SKIP(cgroup, {.memory_bytes = 64 << 20});
  LimitedRun run;
  run.cgroup = cgroup.get();
  RunResult r =
      RunLimited({"/bin/sh", "-c", "x=$(head -c 4000000 /dev/zero | tr '\\0' a); echo ${#x}"}, run,
                 cgroup.get());
  EXPECT_EQ(r.status, RunStatus::kExited) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_data.data, "4000000\n");
  EXPECT_EQ(r.limit, RunLimit::kNone);
  EXPECT_TRUE(r.limits_reached.empty());
}

TEST_F(CgroupRun, AForkBombStallsAtPidsMaxWhileTheHostStaysResponsive) {
  constexpr std::uint64_t kMax = 32;
  CREATE_OR_SKIP(cgroup, {.pids_max = kMax});
  LimitedRun run;
  run.cgroup = cgroup.get();
  run.timeout = std::chrono::seconds(3);
  std::atomic<bool> done = false;
  RunResult r;
  std::thread supervisor([&] {
    r = RunLimited({"/bin/sh", "-c", "b() { b & b & wait; }; b"}, run, cgroup.get());
    done = true;
  });
  // Meanwhile: the host can still start processes, quickly, and the bomb stays at the limit.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::uint64_t most = 0;
  for (int i = 0; i < 5 && !done; ++i) {
    const auto start = Clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    ASSERT_GT(pid, 0) << "the host could not fork";
    ::waitpid(pid, nullptr, 0);
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(1));
    for (const auto& path : cgroup->paths()) {
      if (auto current = ReadSmallFile(path / "pids.current")) {
        most = std::max<std::uint64_t>(most, std::stoull(*current));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  supervisor.join();
  EXPECT_LE(most, kMax);
  EXPECT_THAT(r.limits_reached, Contains(RunLimit::kProcesses));
  EXPECT_TRUE(r.status == RunStatus::kTimedOut || r.status == RunStatus::kExited ||
              r.status == RunStatus::kSignaled)
      << RunStatusName(r.status);
  // Nothing of the bomb is left once the supervisor returns.
  EXPECT_EQ(Procs(*cgroup), "");
  EXPECT_TRUE(cgroup->Remove().has_value());
}

TEST_F(CgroupRun, ACommandWithinItsProcessLimitRunsNormally) {
  CREATE_OR_SKIP(cgroup, {.pids_max = 32});
  LimitedRun run;
  run.cgroup = cgroup.get();
  RunResult r =
      RunLimited({"/bin/sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 0.1 & done; wait; echo ok"},
                 run, cgroup.get());
  EXPECT_EQ(r.status, RunStatus::kExited) << r.error;
  EXPECT_EQ(r.stdout_data.data, "ok\n");
  EXPECT_TRUE(r.limits_reached.empty());
}

TEST_F(CgroupRun, TheSupervisorKillsProcessesThatLeftTheProcessGroup) {
  CREATE_OR_SKIP(cgroup, {.pids_max = 32});
  LimitedRun run;
  run.cgroup = cgroup.get();
  run.timeout = std::chrono::milliseconds(500);
  // setsid: a new session and process group, out of reach of kill(-pgid) (no PID namespace
  // here); the cgroup still holds it.
  RunResult r = RunLimited({"/bin/sh", "-c", "setsid sleep 60 & sleep 60"}, run, cgroup.get());
  EXPECT_EQ(r.status, RunStatus::kTimedOut);
  EXPECT_EQ(r.limit, RunLimit::kTimeout);
  const auto until = Clock::now() + std::chrono::seconds(2);
  while (!Procs(*cgroup).empty() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Procs(*cgroup), "");
}

TEST_F(CgroupRun, ADaemonLeftBehindByAFinishedCommandIsKilled) {
  CREATE_OR_SKIP(cgroup, {.pids_max = 32});
  LimitedRun run;
  run.cgroup = cgroup.get();
  RunResult r =
      RunLimited({"/bin/sh", "-c", "setsid sleep 60 >/dev/null 2>&1 & exit 0"}, run, cgroup.get());
  EXPECT_EQ(r.status, RunStatus::kExited);
  const auto until = Clock::now() + std::chrono::seconds(2);
  while (!Procs(*cgroup).empty() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Procs(*cgroup), "");
}

// The way the sandbox joins: the command process, already in new user and mount namespaces,
// writes "0" through descriptors its parent opened.
TEST_F(CgroupRun, AProcessInNewNamespacesJoinsThroughTheParentsDescriptors) {
  CREATE_OR_SKIP(cgroup, {.memory_bytes = 64 << 20, .pids_max = 8});
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const CgroupAttach attach = cgroup->attach();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(2);
    const int err = AttachSelf(attach);
    (void)!::write(ready[1], &err, sizeof err);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  int err = -1;
  ASSERT_EQ(::read(ready[0], &err, sizeof err), static_cast<ssize_t>(sizeof err));
  ::close(ready[0]);
  EXPECT_EQ(err, 0) << std::strerror(err);
  for (const auto& path : cgroup->paths()) {
    EXPECT_EQ(ReadSmallFile(path / "cgroup.procs").value_or(""), std::to_string(pid) + "\n")
        << path;
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST_F(CgroupRun, ACgroupAbandonedByAKilledCordonIsRemovedByTheNextRun) {
  CREATE_OR_SKIP(probe, CgroupRequest{.pids_max = 10});
  const std::filesystem::path parent = probe->paths().front().parent_path();
  // A creator that is gone (a reaped child's pid), and one that is alive (this process).
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const std::filesystem::path abandoned = parent / fmt::format("cordon-run-{}-test", dead);
  const std::filesystem::path live = parent / fmt::format("cordon-run-{}-test", ::getpid());
  ASSERT_EQ(::mkdir(abandoned.c_str(), 0755), 0) << abandoned;
  ASSERT_EQ(::mkdir(live.c_str(), 0755), 0) << live;
  CREATE_OR_SKIP(next, CgroupRequest{.pids_max = 10});
  EXPECT_FALSE(std::filesystem::exists(abandoned)) << "the dead creator's cgroup stayed";
  EXPECT_TRUE(std::filesystem::exists(live)) << "a live creator's cgroup was removed";
  ::rmdir(live.c_str());
}

TEST(RunCgroupCreate, ARequestedControllerThatIsMissingIsRefusedWithTheFix) {
  Result<std::unique_ptr<RunCgroup>> created =
      RunCgroup::Create(CgroupSupport{}, CgroupRequest{.memory_bytes = 64 << 20});
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(created.error().message, HasSubstr("limits.memory_bytes"));
  EXPECT_THAT(created.error().message, HasSubstr("Delegate=yes"));
}

TEST(RunCgroupCreate, NoRequestNeedsNoController) {
  Result<std::unique_ptr<RunCgroup>> created = RunCgroup::Create(CgroupSupport{}, {});
  ASSERT_TRUE(created.has_value());
  EXPECT_TRUE((*created)->paths().empty());
}

}  // namespace
}  // namespace cordon::limits
