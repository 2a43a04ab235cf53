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
    ASSERT_GT(cordon, 0) << "no cordon process to kill";  // kill(-1) would kill everything
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

std::string StageName(const ::testing::TestParamInfo<const char*>& stage) {
  const std::string name = stage.param;
  return name.substr(0, name.find(','));
}

class KillWhileBuilding : public KillTest, public ::testing::WithParamInterface<const char*> {};

// The child of `parent` whose command line starts with `start` (waited for up to 5 s).
pid_t ChildStartedAs(pid_t parent, const std::string& start) {
  for (int i = 0; i < 500; ++i) {
    std::istringstream children(ReadFile("/proc/" + std::to_string(parent) + "/task/" +
                                         std::to_string(parent) + "/children"));
    for (pid_t pid; children >> pid;) {
      if (ReadFile("/proc/" + std::to_string(pid) + "/cmdline").find(start) == 0) return pid;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  return -1;
}

// The child of strace that runs cordon (strace forks short-lived test children of its own
// first, so the first child is not necessarily cordon); through `cordon mcp`, the helper that
// carries the command line there.
pid_t TracedChild(pid_t strace) {
  return ChildStartedAs(strace, McpRuns() ? McpRunBinary() : CordonBinary());
}

// One-shot and through `cordon mcp`, the process that builds the sandbox is held at a stage
// and killed there; served, the run server is (the client builds nothing).
TEST_P(KillWhileBuilding, LeavesNoProcessMountOrDirectoryBehind) {
  if (::access("/usr/bin/strace", X_OK) != 0) {
    if (MustWork()) FAIL() << "strace is needed to stop cordon at a stage";
    GTEST_SKIP() << "strace is not installed";
  }
  const std::string syscall = GetParam();
  // The run server clones for its own threads (a spare worker per connection) before and
  // around the build's clone, so strace's delay cannot pick the build's out: that stage is
  // killed through `cordon mcp`, whose long-lived session builds the same way.
  if (ServedRuns() && syscall.starts_with("clone")) {
    GTEST_SKIP() << "served: the server's own threads' clones come first (see mcp.)";
  }
  const auto trace = root_ / "strace.out";
  // Through a long-lived session (mcp, served) its namespace holder is built too, and ends
  // only once built (on its status pipe), and bubblewrap dies with its parent only once its
  // mounts are made: one delayed call per process, not every mount.
  const bool long_lived = McpRuns() || ServedRuns() || BwrapBackend();
  const std::vector<std::string> strace = {
      "strace",
      "-f",
      "-qq",
      "-o",
      trace.string(),
      "-e",
      "trace=" + syscall,
      "-e",
      "inject=" + syscall + ":delay_enter=3s" + (long_lived ? ":when=1" : "")};
  if (ServedRuns()) server_.reset();  // replaced by one held under strace
  const HostTraces before = SnapshotTraces();
  pid_t cordon = -1;
  Child waited;
  std::size_t seen = 0;  // of the trace, written before the run
  if (ServedRuns()) {
    std::string why;
    server_ = test_support::RunServer::Start(
        CordonBinary(), root_ / "traced-server",
        {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
         "HOME=" + home_.string(), "LANG=C.UTF-8"},
        &why, strace);
    ASSERT_TRUE(server_) << why;
    cordon = ChildStartedAs(server_->pid(), CordonBinary());
    ASSERT_GT(cordon, 0) << "strace did not start the run server";
    // What the server did before the run (its own threads' clones) does not count.
    seen = ReadFile(trace).size();
    waited = Start(RunArgs(WithDaemon("sleep 30")), Env(), ws_);
    to_kill_.push_back(waited.pid);
  } else {
    std::vector<std::string> args = strace;
    const auto run = RunArgs(WithDaemon("sleep 30"));
    args.insert(args.end(), run.begin(), run.end());
    waited = Start(args, Env(), ws_);
    to_kill_.push_back(waited.pid);
    const pid_t traced = TracedChild(waited.pid);
    ASSERT_GT(traced, 0) << "strace did not start cordon";
    cordon = CordonOf(traced);
    ASSERT_GT(cordon, 0) << "the helper did not start cordon mcp";
  }
  // Wait until some process of the run is held at the stage (strace has printed its entry).
  const std::string first = syscall.substr(0, syscall.find(','));
  bool held = false;
  for (int i = 0; i < 1000 && !held; ++i) {
    const std::string all = ReadFile(trace);
    const std::string text = all.size() > seen ? all.substr(seen) : std::string();
    for (const std::string& name : {first, syscall.substr(syscall.find(',') + 1)}) {
      if (text.find(" " + name + "(") != std::string::npos) held = true;
    }
    if (!held) std::this_thread::sleep_for(milliseconds(10));
  }
  waited.Pump();
  ASSERT_TRUE(held) << "the run never reached " << syscall << "; trace:\n"
                    << ReadFile(trace) << "\noutput:\n"
                    << waited.output;
  if (::kill(cordon, 0) != 0) {
    FAIL() << "cordon " << cordon << " ended before the kill; trace:\n" << ReadFile(trace);
  }
  KillAndCheck(cordon, waited, before);
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
  KillAndCheck(CordonOf(cordon.pid), cordon, before);
}

TEST_F(KillTest, WhileItsOutputPipeIsFullLeavesNothingBehind) {
  const HostTraces before = SnapshotTraces();
  // Nobody reads cordon's output: it blocks writing it, with the command blocked behind it.
  Child cordon = Start(RunArgs(WithDaemon("while :; do echo blocked-line; done")), Env(), ws_);
  to_kill_.push_back(cordon.pid);
  std::this_thread::sleep_for(milliseconds(1500));
  ASSERT_FALSE(PidsWithMarker(marker_).empty()) << "the command never started";
  KillAndCheck(CordonOf(cordon.pid), cordon, before);
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
  // Through cordon mcp, the process to kill is the helper's child, which is gone as soon as the
  // run ended: then the timeout won the race as well.
  const pid_t target = cordon.Wait(milliseconds(0)) ? -1 : CordonOf(cordon.pid);
  if (target <= 0 && cordon.Wait(milliseconds(5000))) {
    // The timeout won the race: the run ended by itself, which must also leave nothing.
    EXPECT_EQ(cordon.ExitCode(), 124) << cordon.output;
    EXPECT_TRUE(NoneWithMarker(marker_, milliseconds(3000)));
    EXPECT_EQ(NewTraces(before, SnapshotTraces()), "");
    return;
  }
  KillAndCheck(target, cordon, before);
}

INSTANTIATE_TEST_SUITE_P(MillisecondsAfterStart, KillAroundTimeout,
                         ::testing::Values(900, 980, 1000, 1020, 1100));

}  // namespace
}  // namespace cordon::fault_test
