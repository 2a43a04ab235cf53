// The process tree: what a command can signal, and what is left running when a run ends
// (normal exit, timeout, the supervisor itself killed with SIGKILL). Checked on the host's
// /proc and on a heartbeat file the daemon keeps appending to.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;
using ProcessTreeTest = KernelTest;

// A process of the caller, outside any sandbox, for the command to try to kill.
class OutsideProcess {
 public:
  OutsideProcess() {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~OutsideProcess() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  // Alive: not yet exited (WNOHANG; not reaped, so the pid cannot be reused meanwhile).
  bool Alive() const {
    siginfo_t info{};
    return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == 0;
  }

 private:
  pid_t pid_ = -1;
};

TEST_F(ProcessTreeTest, OutsideProcessSurvivesAKillAttemptFromInside) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  OutsideProcess outside;
  const RunResult result = Shell(*session, fmt::format("kill -9 {}; echo $?", outside.pid()));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(outside.Alive()) << Describe(result);
}

TEST_F(ProcessTreeTest, ModeOffCanKillTheSameOutsideProcess) {
  // The twin: without a sandbox the same command does kill it.
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!session) return;
  OutsideProcess outside;
  const RunResult result = Shell(*session, fmt::format("kill -9 {}", outside.pid()));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  bool alive = true;
  for (int i = 0; i < 100 && alive; ++i, std::this_thread::sleep_for(10ms)) alive = outside.Alive();
  EXPECT_FALSE(alive);
}

// Every command line visible in the command's /proc, as one line.
constexpr const char* kListProcesses = "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '";

TEST_F(ProcessTreeTest, CommandSeesNoProcessOutsideTheSandbox) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  OutsideProcess outside;
  const RunResult listing = Shell(*session, kListProcesses);
  EXPECT_EQ(listing.status, RunStatus::kExited) << Describe(listing);
  EXPECT_EQ(listing.stdout_data.data.find("sleep 60"), std::string::npos) << Describe(listing);
}

TEST_F(ProcessTreeTest, ModeOffSeesTheOutsideProcess) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!session) return;
  OutsideProcess outside;
  std::this_thread::sleep_for(50ms);  // let it exec sleep
  const RunResult listing = Shell(*session, kListProcesses);
  EXPECT_NE(listing.stdout_data.data.find("sleep 60"), std::string::npos) << Describe(listing);
}

TEST_F(ProcessTreeTest, DaemonIsDeadWhenTheCommandExits) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  const RunResult result = Shell(*session, StartDaemonShell(heartbeat));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  ASSERT_TRUE(Exists(heartbeat)) << "the daemon never started: " << Describe(result);
  // The PID namespace died with its init before Run returned: no wait needed.
  EXPECT_TRUE(NoneWithMarker(heartbeat.string()));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
  // And the run says so (docs/denials.md), where cordon's init ended the command: the native
  // backend's (bubblewrap has its own init, which reports nothing).
  const auto killed = std::find_if(result.denials.begin(), result.denials.end(),
                                   [](const Denial& d) { return d.kind == "killed_at_exit"; });
  if (!UnderBwrap()) {
    ASSERT_NE(killed, result.denials.end()) << Describe(result);
    EXPECT_EQ(killed->layer, "pid namespace");
    EXPECT_TRUE(killed->target.starts_with("1 process (") ||
                killed->target.find(" processes (") != std::string::npos)
        << killed->target;
  }
  // The twin: a command that leaves nothing running reports nothing of the kind.
  const RunResult clean = Shell(*session, "sleep 0.1 & wait; echo done");
  EXPECT_EQ(clean.stdout_data.data, "done\n") << Describe(clean);
  EXPECT_TRUE(std::none_of(clean.denials.begin(), clean.denials.end(), [](const Denial& d) {
    return d.kind == "killed_at_exit";
  })) << Describe(clean);
}

TEST_F(ProcessTreeTest, DaemonOutlivesTheCommandInModeOff) {
  // The twin, and the documented limit of mode off: a setsid daemon escapes the group kill.
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  const RunResult result = Shell(*session, StartDaemonShell(heartbeat));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  const std::vector<pid_t> survivors = PidsWithMarker(heartbeat.string());
  EXPECT_FALSE(survivors.empty());
  EXPECT_FALSE(FileStopsChanging(heartbeat, 300ms));
  for (pid_t pid : survivors) ::kill(pid, SIGKILL);
}

TEST_F(ProcessTreeTest, DaemonIsDeadAfterATimeout) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  const RunResult result = Shell(*session, StartDaemonShell(heartbeat) + "; sleep 60", 1500ms);
  EXPECT_EQ(result.status, RunStatus::kTimedOut) << Describe(result);
  EXPECT_EQ(result.CliExitCode(), 124);
  ASSERT_TRUE(Exists(heartbeat)) << "the daemon never started: " << Describe(result);
  EXPECT_TRUE(NoneWithMarker(heartbeat.string()));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
}

TEST_F(ProcessTreeTest, CancellationKillsTheDaemonToo) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  int cancel[2];
  ASSERT_EQ(::pipe2(cancel, O_CLOEXEC), 0);
  CommandRequest request;
  request.shell_text = StartDaemonShell(heartbeat) + "; sleep 60";
  request.cancel_fd = cancel[0];
  // The caller cancels from another thread once the daemon is beating (an MCP client's
  // notifications/cancelled does exactly this through an eventfd).
  std::thread canceller([&] {
    for (int i = 0; i < 500 && !(Exists(heartbeat) && !ReadFile(heartbeat).empty()); ++i) {
      std::this_thread::sleep_for(10ms);
    }
    (void)!::write(cancel[1], "x", 1);
  });
  const auto start = std::chrono::steady_clock::now();
  const RunResult result = session->Run(request);
  canceller.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_EQ(result.status, RunStatus::kSignaled) << Describe(result);
  EXPECT_EQ(result.error, "cancelled");
  ASSERT_TRUE(Exists(heartbeat)) << "the daemon never started: " << Describe(result);
  EXPECT_TRUE(NoneWithMarker(heartbeat.string()));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
  ::close(cancel[0]);
  ::close(cancel[1]);
}

TEST_F(ProcessTreeTest, AlreadyCancelledRequestLaunchesNothing) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int cancel[2];
  ASSERT_EQ(::pipe2(cancel, O_CLOEXEC), 0);
  ASSERT_EQ(::write(cancel[1], "x", 1), 1);
  CommandRequest request;
  request.shell_text = "touch started";
  request.cancel_fd = cancel[0];
  const RunResult result = session->Run(request);
  EXPECT_EQ(result.error, "cancelled");
  EXPECT_FALSE(Exists(workspace_ / "started"));
  // Twin: the same request without a signalled descriptor runs.
  request.cancel_fd = -1;
  EXPECT_EQ(session->Run(request).status, RunStatus::kExited);
  EXPECT_TRUE(Exists(workspace_ / "started"));
  ::close(cancel[0]);
  ::close(cancel[1]);
}

TEST_F(ProcessTreeTest, TimeoutEndsTheRunAsTimedOut) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const auto start = std::chrono::steady_clock::now();
  const RunResult result = Shell(*session, "sleep 60", 300ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(result.status, RunStatus::kTimedOut) << Describe(result);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.CliExitCode(), 124);
}

TEST_F(ProcessTreeTest, CommandFinishingBeforeTheTimeoutExitsNormally) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, "sleep 0.1; exit 4", 10s);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.exit_code, 4);
}

TEST_F(ProcessTreeTest, DaemonIsDeadAfterTheSupervisorIsKilled) {
  // Served, the killed process is the client: tests/e2e/cli (ServerTest) kill it.
  CORDON_SKIP_UNLESS_LIBRARY("it kills a supervisor forked from this process");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  // The supervisor runs in a forked child of the test, which the test then SIGKILLs.
  const pid_t supervisor = ::fork();
  ASSERT_GE(supervisor, 0);
  if (supervisor == 0) {
    (void)Shell(*session, StartDaemonShell(heartbeat) + "; sleep 60");
    ::_exit(0);
  }
  bool started = false;
  for (int i = 0; i < 500 && !started; ++i, std::this_thread::sleep_for(10ms)) {
    started = Exists(heartbeat) && !ReadFile(heartbeat).empty();
  }
  ASSERT_TRUE(started) << "the daemon never started";
  EXPECT_FALSE(PidsWithMarker(heartbeat.string()).empty());
  ASSERT_EQ(::kill(supervisor, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(supervisor, &status, 0), supervisor);
  // The sandbox's init gets SIGKILL when its parent dies; it then takes the namespace down.
  EXPECT_TRUE(NoneWithMarker(heartbeat.string(), 3s));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
}

// The command starts with every signal at its default and none blocked, whatever the caller
// (or the server) blocks, ignores or handles: an ignored SIGPIPE would survive execve and `yes |
// head` would never end; a blocked SIGTERM would make a command unstoppable.
// (cat catches nothing itself: grep, for one, handles SIGSEGV.)
constexpr const char* kStatus = "cat /proc/self/status";

// The "Sig...:" lines of a /proc/PID/status text.
std::string SignalStates(const std::string& status) {
  std::string states;
  for (const std::string line : {"SigBlk:", "SigIgn:", "SigCgt:"}) {
    const std::size_t at = status.find("\n" + line);
    if (at == std::string::npos) continue;
    states += status.substr(at + 1, status.find('\n', at + 1) - at);
  }
  return states;
}

TEST_F(ProcessTreeTest, CommandStartsWithNoSignalBlockedIgnoredOrHandled) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  sigset_t blocked;
  sigset_t previous;
  ::sigemptyset(&blocked);
  ::sigaddset(&blocked, SIGUSR1);
  ::sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &previous), 0);
  struct sigaction ignore {};
  struct sigaction saved {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGUSR2, &ignore, &saved);
  const RunResult result = Shell(*session, kStatus);
  ::sigaction(SIGUSR2, &saved, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ASSERT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(SignalStates(result.stdout_data.data),
            "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"
            "SigCgt:\t0000000000000000\n")
      << Describe(result);
}

TEST_F(ProcessTreeTest, ASignalTheCommandItselfIgnoresShowsInTheSameCheck) {
  // The twin: what the command sets up itself is kept (and the check sees it).
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, fmt::format("trap '' USR2; exec {}", kStatus));
  ASSERT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_NE(SignalStates(result.stdout_data.data).find("SigIgn:\t0000000000000800"),
            std::string::npos)
      << Describe(result);
}

}  // namespace
}  // namespace cordon::kernel_test
