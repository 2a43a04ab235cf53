// Supervise: exit statuses, timeouts, output capture and streaming, and what is killed when.
#include "exec/supervisor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "exec/command_pipes.h"
#include "exec/output_capture.h"
#include "exec/process_control.h"
#include "exec/spawn_unsandboxed.h"
#include "run_helpers.h"

namespace cordon::exec {
namespace {

using namespace std::chrono_literals;
using testing::MakePlan;
using testing::ProcessGone;
using testing::SpawnAndSupervise;

RunResult MustRun(std::vector<std::string> argv, const SuperviseOptions& options = {}) {
  Result<RunResult> result = SpawnAndSupervise(MakePlan(std::move(argv)), options);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? *result : RunResult{};
}

RunResult MustRunShell(const std::string& text, const SuperviseOptions& options = {}) {
  return MustRun({"/bin/sh", "-c", text}, options);
}

TEST(Supervise, CapturesStdoutAndStderrSeparately) {
  RunResult result = MustRunShell("echo out; echo err >&2");
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_data.data, "out\n");
  EXPECT_EQ(result.stderr_data.data, "err\n");
  EXPECT_EQ(result.CliExitCode(), 0);
}

TEST(Supervise, ReportsTheCommandsOwnExitCode) {
  RunResult result = MustRunShell("exit 3");
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.CliExitCode(), 3);
}

TEST(Supervise, ReportsTheSignalThatKilledTheCommand) {
  RunResult result = MustRunShell("kill -TERM $$");
  EXPECT_EQ(result.status, RunStatus::kSignaled);
  EXPECT_EQ(result.signal, SIGTERM);
  EXPECT_EQ(result.CliExitCode(), 128 + SIGTERM);
}

TEST(Supervise, TimeoutKillsTheCommandAndReportsTimedOut) {
  SuperviseOptions options;
  options.timeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  RunResult result = MustRun({"sleep", "30"}, options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(result.status, RunStatus::kTimedOut);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.CliExitCode(), 124);
}

TEST(Supervise, CancelDescriptorKillsTheWholeGroupAtOnce) {
  int cancel[2];
  ASSERT_EQ(::pipe2(cancel, O_CLOEXEC), 0);
  SuperviseOptions options;
  options.timeout = 30s;
  options.cancel_fd = cancel[0];
  std::string pid_text;
  options.on_output = [&](OutputStream, std::string_view data) {
    pid_text.append(data);
    (void)!::write(cancel[1], "x", 1);  // cancel as soon as the command has said who it is
  };
  const auto start = std::chrono::steady_clock::now();
  RunResult result = MustRunShell("sleep 30 & echo $!; wait", options);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(result.status, RunStatus::kSignaled);
  EXPECT_EQ(result.signal, SIGKILL);
  EXPECT_EQ(result.error, "cancelled");
  ASSERT_FALSE(pid_text.empty());
  EXPECT_TRUE(ProcessGone(std::stoi(pid_text))) << "background sleep survived cancellation";
  ::close(cancel[0]);
  ::close(cancel[1]);
}

TEST(Supervise, UnsignalledCancelDescriptorLetsTheCommandFinish) {
  int cancel[2];
  ASSERT_EQ(::pipe2(cancel, O_CLOEXEC), 0);
  SuperviseOptions options;
  options.cancel_fd = cancel[0];
  RunResult result = MustRunShell("sleep 0.2; echo done", options);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.stdout_data.data, "done\n");
  EXPECT_TRUE(result.error.empty());
  ::close(cancel[0]);
  ::close(cancel[1]);
}

TEST(Supervise, CommandFinishingInTimeIsNotTimedOut) {
  SuperviseOptions options;
  options.timeout = 10s;
  RunResult result = MustRunShell("sleep 0.1; echo done", options);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.stdout_data.data, "done\n");
}

TEST(Supervise, TimeoutKillsTheWholeProcessGroup) {
  SuperviseOptions options;
  options.timeout = 300ms;
  std::string pid_text;
  options.on_output = [&](OutputStream, std::string_view data) { pid_text.append(data); };
  RunResult result = MustRunShell("sleep 30 & echo $!; wait", options);
  EXPECT_EQ(result.status, RunStatus::kTimedOut);
  ASSERT_FALSE(pid_text.empty());
  EXPECT_TRUE(ProcessGone(std::stoi(pid_text))) << "background sleep survived the timeout";
}

TEST(Supervise, BackgroundChildrenInTheGroupDieWhenTheCommandExits) {
  RunResult result = MustRunShell("sleep 30 & echo $!");
  EXPECT_EQ(result.status, RunStatus::kExited);
  ASSERT_FALSE(result.stdout_data.data.empty());
  EXPECT_TRUE(ProcessGone(std::stoi(result.stdout_data.data)));
}

TEST(Supervise, ProcessThatLeftTheGroupSurvivesUnsandboxedButDoesNotBlockTheRun) {
  // The documented limit of mode off (the sandboxed twin is in tests/kernel): a setsid
  // daemon escapes the group kill. It holds stdout open, yet Run returns after the drain grace.
  // (The command waits for the daemon's pid file, so the group kill cannot win the race
  // against setsid.)
  const auto start = std::chrono::steady_clock::now();
  RunResult result = MustRunShell(
      "f=$(mktemp); setsid sh -c \"echo \\$\\$ > $f; exec sleep 30\" & "
      "while [ ! -s $f ]; do sleep 0.01; done; cat $f; rm -f $f");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(result.status, RunStatus::kExited);
  ASSERT_FALSE(result.stdout_data.data.empty());
  const pid_t daemon = std::stoi(result.stdout_data.data);
  EXPECT_FALSE(ProcessGone(daemon, 100ms));
  ::kill(daemon, SIGKILL);
}

TEST(Supervise, HugeOutputIsCappedWithHeadAndTailInBoundedMemory) {
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  SuperviseOptions options;
  options.output_cap = 64 * 1024;
  // 200 MB through the pipe: if the supervisor kept it, peak RSS would grow by that much.
  RunResult result = MustRunShell("head -c 200000000 /dev/zero; printf END", options);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.stdout_data.total_bytes, 200000003u);
  EXPECT_EQ(result.stdout_data.truncated_bytes, 200000003u - 64 * 1024);
  EXPECT_EQ(result.stdout_data.data.size(),
            64 * 1024 + OmittedMarker(result.stdout_data.truncated_bytes).size());
  EXPECT_TRUE(result.stdout_data.data.ends_with("END"));
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 32 * 1024) << "KiB of peak RSS growth";
}

TEST(Supervise, FloodOnBothStreamsAtOnceDoesNotDeadlock) {
  // Neither stream may be left unread while the other floods: the command would block on the
  // full pipe forever.
  SuperviseOptions options;
  options.output_cap = 4096;
  options.timeout = 60s;
  RunResult result =
      MustRunShell("head -c 30000000 /dev/zero >&2 & head -c 30000000 /dev/zero; wait", options);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.stdout_data.total_bytes, 30000000u);
  EXPECT_EQ(result.stderr_data.total_bytes, 30000000u);
}

TEST(Supervise, CommandIgnoringSigtermIsStillKilledAtTheTimeout) {
  SuperviseOptions options;
  options.timeout = 200ms;
  RunResult result = MustRunShell("trap '' TERM HUP INT; sleep 30", options);
  EXPECT_EQ(result.status, RunStatus::kTimedOut);
  EXPECT_EQ(result.signal, SIGKILL);
}

TEST(Supervise, StreamsEveryChunkToTheCallbackEvenBeyondTheCap) {
  SuperviseOptions options;
  options.output_cap = 16;
  std::string streamed;
  options.on_output = [&](OutputStream stream, std::string_view data) {
    if (stream == OutputStream::kStdout) streamed.append(data);
  };
  RunResult result = MustRunShell("seq 1 1000", options);
  EXPECT_EQ(streamed.size(), result.stdout_data.total_bytes);
  EXPECT_TRUE(streamed.starts_with("1\n2\n3\n"));
  EXPECT_TRUE(streamed.ends_with("999\n1000\n"));
  EXPECT_GT(result.stdout_data.truncated_bytes, 0u);
}

// capture_output = false (`cordon run` in a terminal): every byte still reaches the callback,
// the result counts them but keeps none, and nothing counts as cut (the caller saw it all).
TEST(Supervise, WithoutCaptureStreamsEverythingAndKeepsOnlyTheCounts) {
  SuperviseOptions options;
  options.output_cap = 16;
  options.capture_output = false;
  std::string out;
  std::string err;
  options.on_output = [&](OutputStream stream, std::string_view data) {
    (stream == OutputStream::kStdout ? out : err).append(data);
  };
  RunResult result = MustRunShell("seq 1 1000; echo oops >&2", options);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_TRUE(out.starts_with("1\n2\n3\n"));
  EXPECT_TRUE(out.ends_with("999\n1000\n"));
  EXPECT_EQ(err, "oops\n");
  EXPECT_EQ(result.stdout_data.total_bytes, out.size());
  EXPECT_EQ(result.stderr_data.total_bytes, err.size());
  EXPECT_EQ(result.stdout_data.data, "");
  EXPECT_EQ(result.stderr_data.data, "");
  EXPECT_EQ(result.stdout_data.truncated_bytes, 0u);
  EXPECT_TRUE(result.limits_reached.empty());
}

// The twin: the same command with capture on (the default) keeps the text, cut to the cap.
TEST(Supervise, WithCaptureTheSameOutputIsKeptAndCut) {
  SuperviseOptions options;
  options.output_cap = 16;
  options.on_output = [](OutputStream, std::string_view) {};
  RunResult result = MustRunShell("seq 1 1000; echo oops >&2", options);
  EXPECT_TRUE(result.stdout_data.data.starts_with("1\n2\n3\n"));
  EXPECT_TRUE(result.stdout_data.data.ends_with("1000\n"));
  EXPECT_EQ(result.stderr_data.data, "oops\n");
  EXPECT_GT(result.stdout_data.truncated_bytes, 0u);
  EXPECT_EQ(result.limits_reached, std::vector<RunLimit>{RunLimit::kOutput});
}

TEST(Supervise, ThrowingCallbackIsDisabledAndTheRunCompletes) {
  SuperviseOptions options;
  int calls = 0;
  options.on_output = [&](OutputStream, std::string_view) {
    ++calls;
    throw std::runtime_error("consumer broke");
  };
  RunResult result = MustRunShell("echo a; sleep 0.05; echo b", options);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.stdout_data.data, "a\nb\n");
}

// Without pidfds (Linux < 5.3) the supervisor polls for the exit instead.
Result<RunResult> RunWithoutPidfd(std::vector<std::string> argv, const SuperviseOptions& options) {
  CORDON_TRY(CommandPipes pipes, CreateCommandPipes());
  CORDON_TRY(core::UniqueFd dev_null, OpenDevNull());
  CORDON_TRY(LaunchedProcess process,
             SpawnUnsandboxed(MakePlan(std::move(argv)), MakeStdio(pipes, dev_null.get())));
  pipes.CloseWriteEnds();
  process.pidfd.Reset();
  return Supervise(std::move(process),
                   OutputReaders{std::move(pipes.stdout_read), std::move(pipes.stderr_read)},
                   options);
}

TEST(Supervise, WithoutAPidfdStillReportsTheExit) {
  Result<RunResult> result = RunWithoutPidfd({"/bin/sh", "-c", "echo hi; exit 5"}, {});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->status, RunStatus::kExited);
  EXPECT_EQ(result->exit_code, 5);
  EXPECT_EQ(result->stdout_data.data, "hi\n");
}

TEST(Supervise, WithoutAPidfdStillTimesOut) {
  SuperviseOptions options;
  options.timeout = 200ms;
  Result<RunResult> result = RunWithoutPidfd({"sleep", "30"}, options);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(result->status, RunStatus::kTimedOut);
}

TEST(Supervise, ConcurrentSupervisionsKeepTheirOutputApart) {
  // No globals: each thread supervises its own command, and neither waits for the other.
  Result<RunResult> slow, fast;
  std::thread slow_thread([&] {
    slow = SpawnAndSupervise(MakePlan({"/bin/sh", "-c", "sleep 1; echo slow"}));
  });
  std::this_thread::sleep_for(100ms);
  const auto start = std::chrono::steady_clock::now();
  fast = SpawnAndSupervise(MakePlan({"/bin/sh", "-c", "echo fast"}));
  const auto fast_took = std::chrono::steady_clock::now() - start;
  slow_thread.join();
  ASSERT_TRUE(slow.has_value() && fast.has_value());
  EXPECT_EQ(fast->stdout_data.data, "fast\n");
  EXPECT_EQ(slow->stdout_data.data, "slow\n");
  EXPECT_LT(fast_took, 900ms);
}

// A stand-in for the sandbox's init (the native backend's contract): reports a wait status on
// status_fd, or dies without reporting.
struct FakeInit {
  LaunchedProcess process;
  OutputReaders readers;
};

FakeInit StartFakeInit(bool report, int wait_status, int die_by_signal) {
  int status_pipe[2];
  EXPECT_EQ(::pipe2(status_pipe, O_CLOEXEC), 0);
  Result<CommandPipes> pipes = CreateCommandPipes();
  EXPECT_TRUE(pipes.has_value());
  const pid_t pid = ::fork();
  if (pid == 0) {
    (void)!::write(pipes->stdout_write.get(), "from init\n", 10);
    if (report) (void)!::write(status_pipe[1], &wait_status, sizeof wait_status);
    if (die_by_signal != 0) ::raise(die_by_signal);
    ::_exit(0);
  }
  ::close(status_pipe[1]);
  pipes->CloseWriteEnds();
  FakeInit init;
  init.process.pid = pid;
  init.process.pidfd = OpenPidfd(pid);
  init.process.status_fd = core::UniqueFd(status_pipe[0]);
  init.readers = OutputReaders{std::move(pipes->stdout_read), std::move(pipes->stderr_read)};
  return init;
}

TEST(Supervise, SandboxedRunReportsTheStatusInitRelaysNotInitsOwn) {
  FakeInit init = StartFakeInit(/*report=*/true, /*wait_status=*/7 << 8, /*die_by_signal=*/0);
  RunResult result = Supervise(std::move(init.process), std::move(init.readers), {});
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.exit_code, 7);
  EXPECT_EQ(result.stdout_data.data, "from init\n");
}

TEST(Supervise, SandboxedCommandKilledBySignalIsReportedAsSignaled) {
  FakeInit init = StartFakeInit(/*report=*/true, /*wait_status=*/SIGSEGV, /*die_by_signal=*/0);
  RunResult result = Supervise(std::move(init.process), std::move(init.readers), {});
  EXPECT_EQ(result.status, RunStatus::kSignaled);
  EXPECT_EQ(result.signal, SIGSEGV);
}

TEST(Supervise, InitKilledBeforeReportingGivesInitsSignal) {
  FakeInit init = StartFakeInit(/*report=*/false, 0, /*die_by_signal=*/SIGKILL);
  RunResult result = Supervise(std::move(init.process), std::move(init.readers), {});
  EXPECT_EQ(result.status, RunStatus::kSignaled);
  EXPECT_EQ(result.signal, SIGKILL);
}

}  // namespace
}  // namespace cordon::exec
