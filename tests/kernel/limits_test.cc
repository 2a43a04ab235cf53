// Resource limits through Session::Run (docs/limits.md): a memory bomb, a fork bomb, too many
// open files and a CPU spin end with the limit named in the result, and the host stays usable.
// Each limit has its twin: the same command with room to spare runs to the end. A limit this
// machine cannot enforce (a memory limit without a usable cgroup, e.g. unprivileged here)
// refuses the run before anything starts; that branch is checked where it applies, so the
// root and the unprivileged CI runs cover both.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "kernel_support.h"
#include "zygote/zygote_slot.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t kMiB = 1024 * 1024;

// What enforces limit `name` here (empty: nothing; a run that sets it is refused).
std::string Mechanism(const Capabilities& caps, std::string_view name) {
  for (const LimitEnforcement& l : caps.limits) {
    if (l.name == name) return l.mechanism;
  }
  return {};
}

bool Reached(const RunResult& result, RunLimit limit) {
  return std::find(result.limits_reached.begin(), result.limits_reached.end(), limit) !=
         result.limits_reached.end();
}

std::size_t CountLines(const std::filesystem::path& file) {
  const std::string text = Exists(file) ? ReadFile(file) : std::string();
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// This process's peak resident set (VmHWM) in KiB.
long PeakRssKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

class LimitsTest : public KernelTest {
 protected:
  // A session whose config sets `limit` (via `set`); nullopt (and skipped) when the machine
  // cannot enforce it, after checking that a run is then refused with the limit named and
  // nothing started.
  std::optional<Session> LimitedSession(std::string_view limit,
                                        const std::function<void(LimitsConfig&)>& set,
                                        SandboxMode mode = SandboxMode::kWorkspaceWrite) {
    Config config = MakeConfig(mode);
    set(config.limits);
    Result<Session> session = Session::Create(config, workspace_, session_options_);
    if (!session) {
      ADD_FAILURE() << "Session::Create: " << session.error().message;
      return std::nullopt;
    }
    if (UnderBwrap() && mode != SandboxMode::kOff) {
      // bwrap enforces no resource limit: the assessment refuses the run (ADR 0018).
      const Capabilities caps = session->GetCapabilities();
      EXPECT_FALSE(caps.can_run());
      EXPECT_TRUE(std::any_of(caps.missing.begin(), caps.missing.end(), [](const std::string& m) {
        return m.find("bwrap backend does not enforce resource limits") != std::string::npos;
      }));
      ExpectRefusedNamingTheLimit(*session, limit);
      GTEST_MESSAGE_(
          fmt::format("bwrap backend: limits.{} is refused, checked the refusal", limit).c_str(),
          ::testing::TestPartResult::kSkip);
      return std::nullopt;
    }
    if (Mechanism(session->GetCapabilities(), limit).empty()) {
      ExpectRefusedNamingTheLimit(*session, limit);
      GTEST_MESSAGE_(
          fmt::format("limits.{} cannot be enforced here: checked the refusal", limit).c_str(),
          ::testing::TestPartResult::kSkip);
      return std::nullopt;
    }
    return std::move(*session);
  }

  void ExpectRefusedNamingTheLimit(const Session& session, std::string_view limit) {
    const std::filesystem::path marker = workspace_ / "ran";
    const RunResult result = Shell(session, "echo yes > ran");
    EXPECT_EQ(result.status, RunStatus::kSetupFailed) << Describe(result);
    EXPECT_NE(result.error.find(fmt::format("limits.{}", limit)), std::string::npos)
        << result.error;
    EXPECT_FALSE(Exists(marker)) << "a refused run must not start the command";
  }
};

// --- memory ----------------------------------------------------------------------------------

// tail keeps every byte of a line it has not finished: /dev/zero has no newline, so its memory
// grows without end. exec: the bomb is the command process itself.
constexpr const char* kMemoryBomb = "exec tail -n 1 /dev/zero";

TEST_F(LimitsTest, MemoryBombIsKilledByTheMemoryLimit) {
  auto session =
      LimitedSession("memory_bytes", [](LimitsConfig& l) { l.memory_bytes = 64 * kMiB; });
  if (!session) return;
  const RunResult result = Shell(*session, kMemoryBomb, 60s);
  EXPECT_EQ(result.status, RunStatus::kSignaled) << Describe(result);
  EXPECT_EQ(result.signal, SIGKILL) << Describe(result);
  EXPECT_EQ(result.limit, RunLimit::kMemory) << Describe(result);
  EXPECT_TRUE(Reached(result, RunLimit::kMemory)) << Describe(result);
}

TEST_F(LimitsTest, AllocationBelowTheMemoryLimitCompletes) {
  auto session =
      LimitedSession("memory_bytes", [](LimitsConfig& l) { l.memory_bytes = 256 * kMiB; });
  if (!session) return;
  // The same tail, holding 32 MiB: well below the limit.
  const RunResult result = Shell(*session, "head -c 33554432 /dev/zero | tail -n 1 | wc -c");
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_EQ(result.stdout_data.data, "33554432\n") << Describe(result);
  EXPECT_EQ(result.limit, RunLimit::kNone) << Describe(result);
  EXPECT_FALSE(Reached(result, RunLimit::kMemory)) << Describe(result);
}

TEST_F(LimitsTest, MemoryBombInAPipelineIsReportedAsTheMemoryLimit) {
  // The shell survives its OOM-killed child and exits 137: still the memory limit.
  auto session =
      LimitedSession("memory_bytes", [](LimitsConfig& l) { l.memory_bytes = 64 * kMiB; });
  if (!session) return;
  const RunResult result = Shell(*session, "cat /dev/zero | tail -n 1", 60s);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << Describe(result);
  EXPECT_EQ(result.limit, RunLimit::kMemory) << Describe(result);
}

TEST_F(LimitsTest, MemoryLimitAppliesInModeOffToo) {
  auto session = LimitedSession(
      "memory_bytes", [](LimitsConfig& l) { l.memory_bytes = 64 * kMiB; }, SandboxMode::kOff);
  if (!session) return;
  const RunResult result = Shell(*session, kMemoryBomb, 60s);
  EXPECT_EQ(result.limit, RunLimit::kMemory) << Describe(result);
}

// --- processes -------------------------------------------------------------------------------

// Starts `n` background children that each record themselves and then sleep (one process
// each: a copy of sleep named `marker`, so the host's /proc finds them); the command lingers a
// moment so that every child that could start has written its line. The loop runs in a
// subshell of its own: a shell that cannot fork exits at once, and the command's end would
// kill the children it did start before they had run.
std::string SpawnChildren(int n, const std::string& marker) {
  return fmt::format(
      "cp /bin/sleep ./{1}; (i=0; while [ $i -lt {0} ]; do (echo x >> children; exec ./{1} 30) & "
      "i=$((i+1)); done) 2>/dev/null; sleep 1",
      n, marker);
}

TEST_F(LimitsTest, ProcessLimitCapsHowManyChildrenStart) {
  auto session = LimitedSession("processes", [](LimitsConfig& l) { l.processes = 10; });
  if (!session) return;
  const std::string marker = "cordon-limit-" + unique_;
  const RunResult result = Shell(*session, SpawnChildren(40, marker), 60s);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  const std::size_t started = CountLines(workspace_ / "children");
  EXPECT_GE(started, 1u) << Describe(result);
  EXPECT_LT(started, 10u) << "the shell itself counts against the limit";
  EXPECT_TRUE(NoneWithMarker(marker, 5s));
  if (Mechanism(session->GetCapabilities(), "processes").find("cgroup") != std::string::npos) {
    EXPECT_TRUE(Reached(result, RunLimit::kProcesses)) << Describe(result);
  }
}

TEST_F(LimitsTest, ChildrenBelowTheProcessLimitAllStart) {
  auto session = LimitedSession("processes", [](LimitsConfig& l) { l.processes = 100; });
  if (!session) return;
  const std::string marker = "cordon-limit-" + unique_;
  const RunResult result = Shell(*session, SpawnChildren(40, marker), 60s);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(CountLines(workspace_ / "children"), 40u);
  EXPECT_FALSE(Reached(result, RunLimit::kProcesses)) << Describe(result);
  EXPECT_TRUE(NoneWithMarker(marker, 5s));
}

TEST_F(LimitsTest, ForkBombEndsAndLeavesNothingBehind) {
  auto session = LimitedSession("processes", [](LimitsConfig& l) { l.processes = 64; });
  if (!session) return;
  // The classic bomb, named so that its processes can be found on the host; the timeout ends
  // it if it keeps itself alive at the limit.
  const std::string name = "bomb" + std::to_string(::getpid());
  const RunResult result =
      Shell(*session, fmt::format("{0}() {{ {0} | {0} & }}; {0}; sleep 2", name), 10s);
  EXPECT_TRUE(result.status == RunStatus::kExited || result.status == RunStatus::kTimedOut)
      << Describe(result);
  EXPECT_TRUE(NoneWithMarker(name, 5s)) << "a process of the bomb survived the run";
  // The host is usable: this process can still fork.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
}

// --- open files and CPU ----------------------------------------------------------------------

TEST_F(LimitsTest, OpenFilesLimitIsWhatTheCommandSees) {
  auto session = LimitedSession("open_files", [](LimitsConfig& l) { l.open_files = 37; });
  if (!session) return;
  const RunResult result = Shell(*session, "ulimit -n");
  EXPECT_EQ(result.stdout_data.data, "37\n") << Describe(result);
}

TEST_F(LimitsTest, WithoutAnOpenFilesLimitTheInheritedOneStays) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, "ulimit -n");
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_NE(result.stdout_data.data, "37\n") << Describe(result);
}

TEST_F(LimitsTest, OpenFilesLimitAppliesInModeOffToo) {
  auto session = LimitedSession(
      "open_files", [](LimitsConfig& l) { l.open_files = 37; }, SandboxMode::kOff);
  if (!session) return;
  EXPECT_EQ(Shell(*session, "ulimit -n").stdout_data.data, "37\n");
}

// Mode off applies the limits, but an unconfined command can leave its cgroup or, as root,
// raise its rlimits again: `cordon status` and the run report call them advisory there, and
// only there. The timeout and the output cap are the supervisor's own and never advisory.
void SetOpenFilesAndCpu(LimitsConfig& l) {
  l.open_files = 37;
  l.cpu_seconds = 30;
}

TEST_F(LimitsTest, ModeOffShowsItsLimitsAsAdvisory) {
  auto session = LimitedSession("open_files", SetOpenFilesAndCpu, SandboxMode::kOff);
  if (!session) return;
  const Capabilities caps = session->GetCapabilities();
  for (const char* name : {"open_files", "cpu_seconds"}) {
    EXPECT_NE(Mechanism(caps, name).find("advisory in mode off"), std::string::npos)
        << name << " by " << Mechanism(caps, name);
  }
  EXPECT_EQ(Mechanism(caps, "timeout_seconds").find("advisory"), std::string::npos);
}

TEST_F(LimitsTest, ASandboxedModeShowsTheSameLimitsAsEnforcedNotAdvisory) {
  auto session = LimitedSession("open_files", SetOpenFilesAndCpu);
  if (!session) return;
  const Capabilities caps = session->GetCapabilities();
  for (const char* name : {"open_files", "cpu_seconds"}) {
    EXPECT_FALSE(Mechanism(caps, name).empty()) << name;
    EXPECT_EQ(Mechanism(caps, name).find("advisory"), std::string::npos)
        << name << " by " << Mechanism(caps, name);
  }
}

TEST_F(LimitsTest, CpuSpinEndsAtTheCpuLimit) {
  auto session = LimitedSession("cpu_seconds", [](LimitsConfig& l) { l.cpu_seconds = 1; });
  if (!session) return;
  const RunResult result = Shell(*session, "while :; do :; done", 30s);
  EXPECT_EQ(result.status, RunStatus::kSignaled) << Describe(result);
  EXPECT_EQ(result.signal, SIGXCPU) << Describe(result);
  EXPECT_EQ(result.limit, RunLimit::kCpu) << Describe(result);
}

TEST_F(LimitsTest, ShortCommandUnderTheCpuLimitExitsNormally) {
  auto session = LimitedSession("cpu_seconds", [](LimitsConfig& l) { l.cpu_seconds = 1; });
  if (!session) return;
  const RunResult result = Shell(*session, "echo done");
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.stdout_data.data, "done\n");
  EXPECT_EQ(result.limit, RunLimit::kNone);
}

// --- the per-session zygote (MCP) ------------------------------------------------------------

class ZygoteLimitsTest : public LimitsTest {
 protected:
  void SetUp() override {
    LimitsTest::SetUp();
    session_options_.long_lived = true;
  }
};

TEST_F(ZygoteLimitsTest, MemoryBombInALongLivedSessionLeavesTheSessionUsable) {
  auto session =
      LimitedSession("memory_bytes", [](LimitsConfig& l) { l.memory_bytes = 64 * kMiB; });
  if (!session) return;
  const std::uint64_t before = zygote::ZygoteLaunches();
  const RunResult bomb = Shell(*session, kMemoryBomb, 60s);
  EXPECT_EQ(bomb.limit, RunLimit::kMemory) << Describe(bomb);
  const RunResult next = Shell(*session, "echo still here");
  EXPECT_EQ(next.stdout_data.data, "still here\n") << Describe(next);
  if (InLibrary()) {  // served, the server's zygote ran them
    EXPECT_EQ(zygote::ZygoteLaunches(), before + 2) << "both commands joined the session's zygote";
  }
}

TEST_F(ZygoteLimitsTest, ProcessLimitHoldsInALongLivedSession) {
  auto session = LimitedSession("processes", [](LimitsConfig& l) { l.processes = 10; });
  if (!session) return;
  const std::string marker = "cordon-limit-" + unique_;
  Shell(*session, "true");  // the zygote exists before the limited command
  const RunResult result = Shell(*session, SpawnChildren(40, marker), 60s);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_LT(CountLines(workspace_ / "children"), 10u);
  EXPECT_TRUE(NoneWithMarker(marker, 5s));
}

// --- output and stdin ------------------------------------------------------------------------

TEST_F(LimitsTest, OutputFloodIsCutAndTheSupervisorStaysSmall) {
  Config config = MakeConfig();
  config.limits.output_bytes = 1 * kMiB;
  auto session = SessionOrSkip(config);
  if (!session) return;
  const long before = PeakRssKib();
  // 1 GiB on stdout: the supervisor keeps the head and the tail, and reads all of it.
  const RunResult result = Shell(*session, "head -c 1073741824 /dev/zero; echo end >&2", 120s);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_TRUE(Reached(result, RunLimit::kOutput)) << Describe(result);
  // Head and tail within the cap, plus the line that marks the cut.
  EXPECT_LE(result.stdout_data.data.size(), 1 * kMiB + 200);
  EXPECT_GE(result.stdout_data.truncated_bytes, 1073741824u - 1 * kMiB);
  EXPECT_EQ(result.stderr_data.data, "end\n");
#if defined(__SANITIZE_ADDRESS__)
  // ASan keeps freed buffers in its quarantine (256 MiB): the peak says nothing here.
  (void)before;
#else
  EXPECT_LT(PeakRssKib() - before, 64 * 1024) << "the supervisor's memory grew with the output";
#endif
}

TEST_F(LimitsTest, OutputBelowTheCapIsKeptWhole) {
  Config config = MakeConfig();
  config.limits.output_bytes = 1 * kMiB;
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult result = Shell(*session, "head -c 1000 /dev/zero");
  EXPECT_EQ(result.stdout_data.data.size(), 1000u);
  EXPECT_EQ(result.stdout_data.truncated_bytes, 0u);
  EXPECT_FALSE(Reached(result, RunLimit::kOutput));
}

// A caller feeding stdin to a command that closes it or never reads it: the run ends on its own
// and the writer gets EPIPE (not a hang, not a signal) once the command's tree is gone.
class StdinFeeder {
 public:
  StdinFeeder() {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    read_ = fds[0];
    write_ = fds[1];
    writer_ = std::thread([this] {
      const std::string chunk(64 * 1024, 'x');
      for (int i = 0; i < 1024; ++i) {  // 64 MiB, far more than a pipe holds
        if (::write(write_, chunk.data(), chunk.size()) < 0) {
          error_ = errno;
          break;
        }
      }
      ::close(write_);
    });
  }
  ~StdinFeeder() {
    if (writer_.joinable()) writer_.join();
  }
  int read_fd() const { return read_; }
  // Closes the caller's read end (as a caller does after the run) and waits for the writer.
  int Finish() {
    ::close(read_);
    writer_.join();
    return error_;
  }

 private:
  int read_ = -1;
  int write_ = -1;
  int error_ = 0;
  std::thread writer_;
};

RunResult RunWithStdin(const Session& session, const std::string& text, int stdin_fd) {
  CommandRequest request;
  request.shell_text = text;
  request.stdin_fd = stdin_fd;
  request.timeout = 30s;
  return session.Run(request);
}

TEST_F(LimitsTest, CommandThatClosesStdinEndsNormally) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  ::signal(SIGPIPE, SIG_IGN);
  StdinFeeder feeder;
  const RunResult result = RunWithStdin(*session, "exec 0<&-; echo closed", feeder.read_fd());
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.stdout_data.data, "closed\n");
  EXPECT_EQ(feeder.Finish(), EPIPE);
}

TEST_F(LimitsTest, CommandThatNeverReadsStdinEndsNormally) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  ::signal(SIGPIPE, SIG_IGN);
  StdinFeeder feeder;
  const RunResult result = RunWithStdin(*session, "sleep 0.2; echo ignored", feeder.read_fd());
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.stdout_data.data, "ignored\n");
  EXPECT_EQ(feeder.Finish(), EPIPE);
}

TEST_F(LimitsTest, CommandThatReadsStdinGetsAllOfIt) {
  // The twin: a reader sees every byte the caller wrote.
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  StdinFeeder feeder;
  const RunResult result = RunWithStdin(*session, "wc -c", feeder.read_fd());
  EXPECT_EQ(result.stdout_data.data, "67108864\n") << Describe(result);
  EXPECT_EQ(feeder.Finish(), 0);
}

TEST_F(LimitsTest, CommandIgnoringSigtermIsKilledAtTheTimeoutWithItsChildren) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string marker = "cordon-term-" + unique_;
  const RunResult result = Shell(
      *session,
      fmt::format("cp /bin/sleep ./{0}; trap '' TERM; sh -c \"trap '' TERM; exec ./{0} 60\" & wait",
                  marker),
      1s);
  EXPECT_EQ(result.status, RunStatus::kTimedOut) << Describe(result);
  EXPECT_EQ(result.limit, RunLimit::kTimeout) << Describe(result);
  EXPECT_TRUE(NoneWithMarker(marker, 5s));
}

}  // namespace
}  // namespace cordon::kernel_test
