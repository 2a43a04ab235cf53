// cordon killed with SIGKILL at every stage of a run: while the sandbox is being built (held at a
// chosen system call by strace's delay injection), while output streams, and while a timeout
// is being handled. Afterwards, seen from the host: no process of the command survives, no
// mount, private directory or cgroup is left behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <thread>

#include "fault_support.h"

namespace cordon::fault_test {
namespace {

using std::chrono::milliseconds;

class KillTest : public FaultTest {
 protected:
  // Kills `cordon` (SIGKILL), reaps `waited` (cordon itself or the strace around it), then
  // checks what is left on the host.
  void KillAndCheck(pid_t cordon, Child& waited, const HostTraces& before) {
    ASSERT_EQ(::kill(cordon, SIGKILL), 0)
        << "cordon (" << cordon << ") is gone already: " << std::strerror(errno) << "\n"
        << (waited.Pump(), waited.output);
    EXPECT_TRUE(waited.Wait(milliseconds(20000))) << "the killed run did not end";
    EXPECT_TRUE(NoneWithMarker(marker_, milliseconds(3000)))
        << "processes of the command survived cordon: " << PidList();
    EXPECT_EQ(NewTraces(before, SnapshotTraces()), "");
  }

  std::string PidList() const {
    std::string text;
    for (const pid_t pid : PidsWithMarker(marker_)) {
      std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
      for (char& c : cmdline) {
        if (c == '\0') c = ' ';
      }
      text += std::to_string(pid) + ": " + cmdline + "\n";
    }
    return text;
  }

  // Shell text of a command that leaves a daemon (double fork + setsid) behind and then runs
  // `rest`: a survivor would be found by the marker in its command line.
  std::string WithDaemon(const std::string& rest) const {
    return "( setsid sh -c 'while :; do sleep 0.1; done' " + marker_ +
           " </dev/null >/dev/null 2>&1 & ); " + rest;
  }
};

// The child of strace that runs cordon (strace forks short-lived test children of its own
// first, so the first child is not necessarily cordon).
pid_t TracedChild(pid_t strace) {
  for (int i = 0; i < 500; ++i) {
    std::istringstream children(ReadFile("/proc/" + std::to_string(strace) + "/task/" +
                                         std::to_string(strace) + "/children"));
    for (pid_t pid; children >> pid;) {
      if (ReadFile("/proc/" + std::to_string(pid) + "/cmdline").find(CordonBinary()) == 0) {
        return pid;
      }
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return -1;
}

std::string StageName(const ::testing::TestParamInfo<const char*>& stage) {
  const std::string name = stage.param;
  return name.substr(0, name.find(','));
}

class KillWhileBuilding : public KillTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(KillWhileBuilding, LeavesNoProcessMountOrDirectoryBehind) {
  // Served, the sandbox is built by the server, not by the process strace holds here; a
  // killed client is the streaming cases below and tests/e2e/cli (ServerTest).
  if (ServedRuns()) GTEST_SKIP() << "served: the client builds no sandbox";
  if (::access("/usr/bin/strace", X_OK) != 0) {
    if (MustWork()) FAIL() << "strace is needed to stop cordon at a stage";
    GTEST_SKIP() << "strace is not installed";
  }
  const std::string syscall = GetParam();
  const auto trace = root_ / "strace.out";
  const HostTraces before = SnapshotTraces();
  std::vector<std::string> args = {"strace",
                                   "-f",
                                   "-qq",
                                   "-o",
                                   trace.string(),
                                   "-e",
                                   "trace=" + syscall,
                                   "-e",
                                   "inject=" + syscall + ":delay_enter=3s"};
  const auto run = RunArgs(WithDaemon("sleep 30"));
  args.insert(args.end(), run.begin(), run.end());
  Child strace = Start(args, Env(), ws_);
  to_kill_.push_back(strace.pid);
  const pid_t cordon = TracedChild(strace.pid);
  ASSERT_GT(cordon, 0) << "strace did not start cordon";
  // Wait until some process of the run is held at the stage (strace has printed its entry).
  const std::string first = syscall.substr(0, syscall.find(','));
  bool held = false;
  for (int i = 0; i < 1000 && !held; ++i) {
    const std::string text = ReadFile(trace);
    for (const std::string& name : {first, syscall.substr(syscall.find(',') + 1)}) {
      if (text.find(" " + name + "(") != std::string::npos) held = true;
    }
    if (!held) std::this_thread::sleep_for(milliseconds(10));
  }
  strace.Pump();
  ASSERT_TRUE(held) << "the run never reached " << syscall << "; trace:\n"
                    << ReadFile(trace) << "\noutput:\n"
                    << strace.output;
  if (::kill(cordon, 0) != 0) {
    FAIL() << "cordon " << cordon << " ended before the kill; trace:\n" << ReadFile(trace);
  }
  KillAndCheck(cordon, strace, before);
}

INSTANTIATE_TEST_SUITE_P(Stages, KillWhileBuilding,
                         ::testing::Values("clone,clone3", "mount", "pivot_root",
                                           "landlock_restrict_self", "seccomp"),
                         StageName);

TEST_F(KillTest, DuringOutputStreamingLeavesNothingBehind) {
  const HostTraces before = SnapshotTraces();
  Child cordon = Start(RunArgs(WithDaemon("while :; do echo streaming-line; done")), Env(), ws_);
  to_kill_.push_back(cordon.pid);
  for (int i = 0; i < 1000 && cordon.output.find("streaming-line") == std::string::npos; ++i) {
    cordon.Pump();
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_NE(cordon.output.find("streaming-line"), std::string::npos) << cordon.output;
  KillAndCheck(cordon.pid, cordon, before);
}

TEST_F(KillTest, WhileItsOutputPipeIsFullLeavesNothingBehind) {
  const HostTraces before = SnapshotTraces();
  // Nobody reads cordon's output: it blocks writing it, with the command blocked behind it.
  Child cordon = Start(RunArgs(WithDaemon("while :; do echo blocked-line; done")), Env(), ws_);
  to_kill_.push_back(cordon.pid);
  std::this_thread::sleep_for(milliseconds(1500));
  ASSERT_FALSE(PidsWithMarker(marker_).empty()) << "the command never started";
  KillAndCheck(cordon.pid, cordon, before);
}

// The command ignores SIGTERM; cordon is killed around the moment its 1 s timeout fires.
class KillAroundTimeout : public KillTest, public ::testing::WithParamInterface<int> {};

TEST_P(KillAroundTimeout, LeavesNothingBehind) {
  const HostTraces before = SnapshotTraces();
  Child cordon =
      Start(RunArgs(WithDaemon("trap '' TERM; echo started; while :; do sleep 0.05; done"),
                    {"--timeout", "1"}),
            Env(), ws_);
  to_kill_.push_back(cordon.pid);
  for (int i = 0; i < 1000 && cordon.output.find("started") == std::string::npos; ++i) {
    cordon.Pump();
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_NE(cordon.output.find("started"), std::string::npos) << cordon.output;
  std::this_thread::sleep_for(milliseconds(GetParam()));
  if (cordon.Wait(milliseconds(0))) {
    // The timeout won the race: the run ended by itself, which must also leave nothing.
    EXPECT_EQ(cordon.ExitCode(), 124) << cordon.output;
    EXPECT_TRUE(NoneWithMarker(marker_, milliseconds(3000)));
    EXPECT_EQ(NewTraces(before, SnapshotTraces()), "");
    return;
  }
  KillAndCheck(cordon.pid, cordon, before);
}

INSTANTIATE_TEST_SUITE_P(MillisecondsAfterStart, KillAroundTimeout,
                         ::testing::Values(900, 980, 1000, 1020, 1100));

}  // namespace
}  // namespace cordon::fault_test
