// The rlimits, really applied: each case in a forked child (they change the calling process).
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "limited_child.h"
#include "limits/resource_limits.h"

namespace cordon::limits {
namespace {

using testing::MustWork;
using testing::RunLimited;

// Runs `body` in a forked child and returns its exit code (-1 when it was killed).
template <typename Body>
int InChild(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Opens /dev/null until it fails; returns how many opened (errno is left as the failure's).
int OpenUntilFailure(int at_most) {
  int opened = 0;
  while (opened < at_most && ::open("/dev/null", O_RDONLY) >= 0) ++opened;
  return opened;
}

TEST(OpenFilesLimit, OpenFailsWithEmfileAtTheLimit) {
  EXPECT_EQ(InChild([] {
              if (!ApplyResourceLimits({.open_files = 8}).ok()) return 10;
              const int opened = OpenUntilFailure(100);
              // 0, 1, 2 and whatever else the test runner holds count against the 8.
              return opened < 8 && errno == EMFILE ? 0 : 11;
            }),
            0);
}

TEST(OpenFilesLimit, ACommandWithinTheLimitOpensWhatItNeeds) {
  EXPECT_EQ(InChild([] {
              if (!ApplyResourceLimits({.open_files = 256}).ok()) return 10;
              return OpenUntilFailure(100) == 100 ? 0 : 11;
            }),
            0);
}

TEST(OpenFilesLimit, AValueAboveTheHardLimitIsLoweredNotRaised) {
  EXPECT_EQ(InChild([] {
              rlimit before{};
              ::getrlimit(RLIMIT_NOFILE, &before);
              if (before.rlim_max == RLIM_INFINITY) return 0;
              if (!ApplyResourceLimits({.open_files = before.rlim_max + 1000}).ok()) return 10;
              rlimit after{};
              ::getrlimit(RLIMIT_NOFILE, &after);
              return after.rlim_max == before.rlim_max && after.rlim_cur == before.rlim_max ? 0
                                                                                            : 11;
            }),
            0);
}

TEST(CpuLimit, ASpinningCommandIsEndedBySigxcpuAndReportedAsTheCpuLimit) {
  testing::LimitedRun run;
  run.rlimits.cpu_seconds = 1;
  run.cpu_limited = true;
  RunResult r = RunLimited({"/bin/sh", "-c", "while :; do :; done"}, run, nullptr);
  EXPECT_EQ(r.status, RunStatus::kSignaled) << r.error;
  EXPECT_EQ(r.signal, SIGXCPU);
  EXPECT_EQ(r.limit, RunLimit::kCpu);
}

TEST(CpuLimit, ACommandWithinItsCpuTimeExitsNormally) {
  testing::LimitedRun run;
  run.rlimits.cpu_seconds = 5;
  run.cpu_limited = true;
  RunResult r = RunLimited(
      {"/bin/sh", "-c", "i=0; while [ $i -lt 1000 ]; do i=$((i+1)); done; exit 3"}, run, nullptr);
  EXPECT_EQ(r.status, RunStatus::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.limit, RunLimit::kNone);
  EXPECT_TRUE(r.limits_reached.empty());
}

// The caller's identity for the RLIMIT_NPROC tests: root is exempt from RLIMIT_NPROC, so as
// root the child becomes `nobody` first (the way an unprivileged caller runs cordon).
constexpr uid_t kNobody = 65534;
constexpr int kSkip = 77;

// Forks `others` sleeping processes of the same user outside any new namespace, then (in a
// user namespace of its own when `own_namespace`) sets RLIMIT_NPROC to 4 and counts how many
// more processes it can start. Exit code: that count, or kSkip.
int ForkUnderNproc(int others, bool own_namespace) {
  if (::geteuid() == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0) {
      return kSkip;
    }
  }
  pid_t children[32];
  int count = 0;
  auto start_sleeper = [&] {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    if (pid > 0) children[count++] = pid;
    return pid > 0;
  };
  int started = 0;
  for (int i = 0; i < others; ++i) (void)start_sleeper();
  if (own_namespace && ::unshare(CLONE_NEWUSER) != 0) {
    started = kSkip;
  } else if (!ApplyResourceLimits({.processes = 4}).ok()) {
    started = 100;
  } else {
    for (int i = 0; i < 10 && start_sleeper(); ++i) ++started;
  }
  for (int i = 0; i < count; ++i) {
    ::kill(children[i], SIGKILL);
    ::waitpid(children[i], nullptr, 0);
  }
  return started;
}

TEST(ProcessesRlimit, InItsOwnUserNamespaceItCountsOnlyTheSandboxsProcesses) {
  const int started = InChild([] { return ForkUnderNproc(8, /*own_namespace=*/true); });
  if (started == kSkip) {
    if (MustWork()) FAIL() << "cannot create a user namespace as an unprivileged user";
    GTEST_SKIP() << "cannot create a user namespace as an unprivileged user";
  }
  // Limit 4 = the process itself + 3 more, although the same user already runs 8 others.
  EXPECT_EQ(started, 3);
}

TEST(ProcessesRlimit, OutsideAUserNamespaceItWouldCountTheUsersOtherProcesses) {
  // Why PlanLimits refuses RLIMIT_NPROC without a user namespace of the sandbox's own: the
  // user's 8 other processes use up the limit and the command cannot start a single one.
  const int started = InChild([] { return ForkUnderNproc(8, /*own_namespace=*/false); });
  if (started == kSkip) GTEST_SKIP() << "cannot switch to an unprivileged user";
  EXPECT_EQ(started, 0);
}

}  // namespace
}  // namespace cordon::limits
