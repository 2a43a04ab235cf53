// The zygote path (src/zygote, ADR 0010): a long-lived session's commands join namespaces
// prepared once. Every guarantee of the one-shot launch is checked again, from outside, with
// commands that really went through the zygote (ZygoteLaunches counts them); the twins run
// the same commands where they must succeed. Each case runs twice: with the commands joining
// the zygote themselves (Direct), and with every command after a session's first started in a
// sandbox the session prepared ahead (Prepared, ADR 0023; PreparedLaunches counts them).
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "core/unique_fd.h"
#include "kernel_support.h"
#include "session/run_for.h"
#include "zygote/zygote_slot.h"
#include "zygote_fixture.h"

namespace cordon::kernel_test {
namespace {

TEST_P(ZygoteTest, WorkspaceWriteLandsAndWriteOutsideDoesNot) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  for (int i = 0; i < 2; ++i) {  // the first command starts the zygote, the second reuses it
    const std::string name = fmt::format("inside{}", i);
    const RunResult inside = Joined(*session, "echo hi > " + name);
    EXPECT_EQ(inside.status, RunStatus::kExited) << Describe(inside);
    EXPECT_EQ(inside.exit_code, 0) << Describe(inside);
    EXPECT_EQ(ReadFile(workspace_ / name), "hi\n");
    // The workspace's parent lies in the host's /tmp: inside, that is the private /tmp, so
    // the write may succeed there, but it never lands on the host.
    (void)Joined(*session, fmt::format("echo x > {}/outside{}", root_.string(), i));
    EXPECT_FALSE(Exists(root_ / fmt::format("outside{}", i)));
    const std::filesystem::path etc = fmt::format("/etc/cordon-zygote-{}-{}", unique_, i);
    cleanup_.push_back(etc);
    const RunResult system = Joined(*session, "echo x > " + etc.string());
    EXPECT_NE(system.exit_code, 0) << Describe(system);
    EXPECT_FALSE(Exists(etc));
    const RunResult home = Joined(*session, fmt::format("echo x > {}/rc{}", home_.string(), i));
    EXPECT_NE(home.exit_code, 0) << Describe(home);
    EXPECT_FALSE(Exists(home_ / fmt::format("rc{}", i)));
  }
}

TEST_P(ZygoteTest, TmpIsPrivateToEachCommand) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  // Twin first: within one command the private TMPDIR (inside /tmp, an empty read-only view
  // around the suite's workspace: decision 0046), /var/tmp, /dev/shm and HOME work.
  const RunResult first = Joined(
      *session,
      "echo a > \"$TMPDIR/left\" && echo b > /var/tmp/left && echo c > /dev/shm/left && "
      "echo d > \"$HOME/left\" && cat \"$TMPDIR/left\" /var/tmp/left /dev/shm/left \"$HOME/left\"");
  EXPECT_EQ(first.stdout_data.data, "a\nb\nc\nd\n") << Describe(first);
  // The next command of the same session finds none of it.
  const RunResult second =
      Joined(*session,
             "ls -A \"$TMPDIR\" /var/tmp /dev/shm \"$HOME\"; test ! -e \"$TMPDIR/left\" && "
             "test ! -e /var/tmp/left && test ! -e /dev/shm/left && test ! -e \"$HOME/left\" && "
             "test -d \"$HOME\"");
  EXPECT_EQ(second.status, RunStatus::kExited) << Describe(second);
  EXPECT_EQ(second.exit_code, 0) << Describe(second);
  // Nor on the host.
  EXPECT_FALSE(Exists("/tmp/.cordon-tmp/left"));
  EXPECT_FALSE(Exists("/var/tmp/left"));
  // The workspace (here under the host's /tmp, bound into the view) persists.
  EXPECT_EQ(Joined(*session, "echo w > kept").exit_code, 0);
  EXPECT_EQ(Joined(*session, "cat kept").stdout_data.data, "w\n");
}

TEST_P(ZygoteTest, EachCommandRunsInItsOwnDirectoryWithOnlyThePlannedEnvironment) {
  ::setenv("CORDON_ZYGOTE_CANARY", "leaked", 1);
  Config config = MakeConfig();
  auto session = SessionOrSkip(config);
  if (!session) return;
  std::filesystem::create_directories(workspace_ / "sub" / "dir");
  (void)Joined(*session, "true");
  WaitForPrepared();  // the prepared process waits in the workspace: this one must chdir
  CommandRequest request;
  request.shell_text = "pwd; echo \"canary=${CORDON_ZYGOTE_CANARY:-none}\"";
  request.cwd = "sub/dir";
  const std::uint64_t before = zygote::ZygoteLaunches();
  const std::uint64_t before_prepared = zygote::PreparedLaunches();
  const RunResult inside = session->Run(request);  // in this process on every path
  if (InLibrary()) {  // else the first command was served: this process prepared nothing
    EXPECT_EQ(zygote::ZygoteLaunches(), before + 1) << Describe(inside);
    EXPECT_EQ(zygote::PreparedLaunches(), before_prepared + (prepared() ? 1 : 0))
        << Describe(inside);
  }
  EXPECT_EQ(inside.stdout_data.data,
            (std::filesystem::canonical(workspace_) / "sub" / "dir").string() + "\ncanary=none\n")
      << Describe(inside);
  // Twin: a session whose config passes the variable sees it, in the workspace itself. (The
  // first session ends first: its prepared sandboxes would count as the second's.)
  session.reset();
  config.environment.pass.push_back("CORDON_ZYGOTE_CANARY");
  auto passing = SessionOrSkip(config);
  ::unsetenv("CORDON_ZYGOTE_CANARY");
  ::setenv("CORDON_ZYGOTE_CANARY", "passed", 1);
  if (!passing) return;
  (void)Joined(*passing, "true");
  const RunResult passed = Joined(*passing, "pwd; echo \"canary=${CORDON_ZYGOTE_CANARY:-none}\"");
  ::unsetenv("CORDON_ZYGOTE_CANARY");
  EXPECT_EQ(passed.stdout_data.data,
            std::filesystem::canonical(workspace_).string() + "\ncanary=passed\n")
      << Describe(passed);
}

TEST_P(ZygoteTest, NoMountOfOneCommandIsSeenByTheNext) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult mounts = Joined(*session, "cat /proc/self/mountinfo | wc -l");
  EXPECT_EQ(mounts.exit_code, 0) << Describe(mounts);
  const RunResult again = Joined(*session, "cat /proc/self/mountinfo | wc -l");
  // Each command's mount table is a fresh copy of the session's: the same size every time.
  EXPECT_EQ(mounts.stdout_data.data, again.stdout_data.data);
}

TEST_P(ZygoteTest, NetworkIsDeniedAndTheOwnLoopbackWorks) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const std::string probe = StageProbe();
  if (probe.empty()) return;
  const RunResult loopback = Joined(*session, fmt::format("'{}' loopback-echo", probe));
  EXPECT_EQ(loopback.stdout_data.data, "ok\n") << Describe(loopback);
  // Nothing outside: the host's interfaces are not in the command's network namespace.
  const RunResult links = Joined(*session, "cat /proc/net/dev | tail -n +3 | cut -d: -f1");
  EXPECT_EQ(links.stdout_data.data.find("eth"), std::string::npos) << Describe(links);
  EXPECT_NE(links.stdout_data.data.find("lo"), std::string::npos) << Describe(links);
}

TEST_P(ZygoteTest, HostLoopbackListenerSeesNoConnection) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const std::string probe = StageProbe();
  if (probe.empty()) return;
  core::UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string connect =
      fmt::format("'{}' connect-tcp 127.0.0.1 {}", probe, ntohs(addr.sin_port));
  for (int i = 0; i < 2; ++i) {
    const RunResult result = Joined(*session, connect);
    EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
    EXPECT_FALSE(core::UniqueFd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)).valid());
  }
  // Twin: a session with network allowed (its zygote has no network namespace) gets through.
  auto open = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!open) return;
  const RunResult allowed = Shell(*open, connect);
  EXPECT_EQ(allowed.stdout_data.data, "ok\n") << Describe(allowed);
  EXPECT_TRUE(core::UniqueFd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC)).valid());
}

TEST_P(ZygoteTest, CommandSeesOnlyItsOwnProcesses) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult ps = Joined(*session, "ls /proc | grep -c '^[0-9]'");
  EXPECT_EQ(ps.exit_code, 0) << Describe(ps);
  // init, sh, ls, grep at most: no holder, no other command, no host process.
  EXPECT_LE(std::stoi(ps.stdout_data.data.empty() ? "99" : ps.stdout_data.data), 4) << Describe(ps);
}

TEST_P(ZygoteTest, DaemonIsDeadWhenTheCommandExits) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  (void)Joined(*session, "true");  // the zygote exists before the measured command
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  const RunResult result = Joined(*session, StartDaemonShell(heartbeat));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  ASSERT_TRUE(Exists(heartbeat)) << "the daemon never started: " << Describe(result);
  EXPECT_TRUE(NoneWithMarker(heartbeat.string()));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
}

TEST_P(ZygoteTest, DaemonIsDeadAfterATimeout) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  const RunResult result = Joined(*session, StartDaemonShell(heartbeat) + "; sleep 60", 1500ms);
  EXPECT_EQ(result.status, RunStatus::kTimedOut) << Describe(result);
  ASSERT_TRUE(Exists(heartbeat)) << "the daemon never started: " << Describe(result);
  EXPECT_TRUE(NoneWithMarker(heartbeat.string()));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
  // The session goes on: the next command runs.
  EXPECT_EQ(Joined(*session, "exit 3").exit_code, 3);
}

TEST_P(ZygoteTest, DaemonIsDeadAfterTheServerIsKilled) {
  // A real server killed: tests/e2e/cli (ServerTest); cordon mcp's end: its own tests.
  CORDON_SKIP_UNLESS_LIBRARY("the server here is a fork of this process");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path heartbeat = workspace_ / "heartbeat";
  const std::string marker = "zygote-holder-" + unique_;
  // The "server" is a forked child of the test that runs two commands (so the second is a
  // joined one) and is then SIGKILLed while the second runs.
  const pid_t server = ::fork();
  ASSERT_GE(server, 0);
  if (server == 0) {
    (void)Shell(*session, "true");
    // Prepared variant: time for the session to prepare the second command's sandbox, whose
    // init is a child of the session's filler thread.
    if (prepared()) std::this_thread::sleep_for(500ms);
    (void)Shell(*session, StartDaemonShell(heartbeat) + "; sleep 60");
    ::_exit(0);
  }
  bool started = false;
  for (int i = 0; i < 1000 && !started; ++i, std::this_thread::sleep_for(10ms)) {
    started = Exists(heartbeat) && !ReadFile(heartbeat).empty();
  }
  ASSERT_TRUE(started) << "the daemon never started";
  EXPECT_FALSE(PidsWithMarker(heartbeat.string()).empty());
  ASSERT_EQ(::kill(server, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(server, &status, 0), server);
  EXPECT_TRUE(NoneWithMarker(heartbeat.string(), 3s));
  EXPECT_TRUE(FileStopsChanging(heartbeat, 300ms));
}

TEST_P(ZygoteTest, ConcurrentCommandsDoNotShareTmp) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  (void)Joined(*session, "true");
  RunResult a;
  RunResult b;
  std::thread other(
      [&] { a = Shell(*session, "echo a > \"$TMPDIR/mine\"; sleep 0.5; cat \"$TMPDIR/mine\""); });
  std::this_thread::sleep_for(100ms);
  b = Shell(
      *session,
      "sleep 0.1; test ! -e \"$TMPDIR/mine\" && echo b > \"$TMPDIR/mine\"; cat \"$TMPDIR/mine\"");
  other.join();
  EXPECT_EQ(a.stdout_data.data, "a\n") << Describe(a);
  EXPECT_EQ(b.stdout_data.data, "b\n") << Describe(b);
}

TEST_P(ZygoteTest, ASessionWithoutTheSwitchLaunchesOneShot) {
  // The twin of every test above: the same command, no zygote.
  session_options_.long_lived = false;
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::uint64_t before = zygote::ZygoteLaunches();
  const RunResult result = Shell(*session, "echo hi > inside");
  EXPECT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_EQ(zygote::ZygoteLaunches(), before);
  EXPECT_EQ(ReadFile(workspace_ / "inside"), "hi\n");
}

TEST_P(ZygoteTest, AGitDirectoryCreatedLaterIsStillProtected) {
  // The plan changes shape (a new read-only .git bind): the command must not run in the old
  // zygote, whose view has no such bind.
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  (void)Joined(*session, "true");
  std::filesystem::create_directories(workspace_ / ".git");
  const RunResult write = Shell(*session, "echo x > .git/config");
  EXPECT_NE(write.exit_code, 0) << Describe(write);
  EXPECT_FALSE(Exists(workspace_ / ".git" / "config"));
  // Twin: the workspace itself stays writable.
  EXPECT_EQ(Shell(*session, "echo x > file").exit_code, 0);
}

TEST_P(ZygoteTest, ASecretCreatedAfterTheSandboxWasPreparedIsStillHidden) {
  // The plan changes shape (a mask for the new file): the command must not run in a sandbox
  // prepared (or a zygote built) before the file existed.
  Config config = MakeConfig();
  const std::filesystem::path secret = std::filesystem::canonical(workspace_) / "late.env";
  config.sandbox.hidden_paths.push_back(secret);
  auto session = SessionOrSkip(config);
  if (!session) return;
  (void)Joined(*session, "true");
  WaitForPrepared();
  const std::uint64_t changes = zygote::PreparedShapeChanges();
  const std::uint64_t before = zygote::PreparedLaunches();
  {
    std::ofstream(secret) << "TOKEN=hunter2\n";
    std::ofstream(workspace_ / "plain.txt") << "visible\n";
  }
  const RunResult read = Shell(*session, "cat late.env; cat plain.txt");
  EXPECT_EQ(read.stdout_data.data.find("hunter2"), std::string::npos) << Describe(read);
  // Twin: a file created at the same moment, not hidden, is read.
  EXPECT_NE(read.stdout_data.data.find("visible"), std::string::npos) << Describe(read);
  EXPECT_EQ(zygote::PreparedLaunches(), before) << "ran in a sandbox prepared without the mask";
  if (prepared() && InLibrary()) {
    EXPECT_GT(zygote::PreparedShapeChanges(), changes);
  }
}

// The first runs of a session, at once, in a workspace without .git: each holds the .git
// placeholder (made by one, adopted by the others) and covers it, never launched without it
// (a hook planted in it would run on the host's next git).
TEST_P(ZygoteTest, ConcurrentFirstRunsNeverPlantAGitHook) {
  for (int round = 0; round < 4; ++round) {
    const std::filesystem::path ws = root_ / fmt::format("ws{}", round);
    std::filesystem::create_directory(ws);
    auto session = SessionOrSkip(MakeConfig(), ws);
    if (!session) return;
    std::vector<std::thread> runs;
    std::vector<RunResult> results(4);
    for (int i = 0; i < 4; ++i) {
      runs.emplace_back([&, i] {
        CommandRequest request;
        request.shell_text = "mkdir -p .git/hooks && echo planted > .git/hooks/pre-commit";
        results[i] = session->Run(request);
      });
    }
    for (std::thread& run : runs) run.join();
    EXPECT_FALSE(Exists(ws / ".git/hooks/pre-commit")) << Describe(results[0]);
    // Twin: the same runs may write the workspace itself.
    EXPECT_EQ(Shell(*session, "echo ok > beside").exit_code, 0);
    EXPECT_TRUE(Exists(ws / "beside"));
  }
}

// A view of more mounts than a prepared sandbox's last check can hold (here 2100 masked files)
// cannot be checked before its command starts: the command starts another way, and the
// session prepares no more sandboxes (each would be refused the same way) instead of
// preparing one behind every command. The masks hold throughout; the twin, a file beside
// them, is read.
TEST_P(ZygoteTest, AViewOfMoreMountsThanAPreparedSandboxChecksStopsPreparing) {
  CORDON_SKIP_UNLESS_LIBRARY("counts this process's prepared sandboxes");
  Config config = MakeConfig();
  const std::filesystem::path many = std::filesystem::canonical(workspace_) / "many";
  std::filesystem::create_directories(many);
  for (int i = 0; i < 2100; ++i) {
    const std::filesystem::path secret = many / fmt::format("{}.env", i);
    std::ofstream(secret) << "TOKEN=" << i << "\n";
    config.sandbox.hidden_paths.push_back(secret);
  }
  { std::ofstream(workspace_ / "plain.txt") << "plain\n"; }
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::string text = "cat many/0.env many/2099.env 2>/dev/null; cat plain.txt";
  EXPECT_EQ(Shell(*session, text).stdout_data.data, "plain\n");
  if (prepared()) {
    // A sandbox of 2100 masks takes a while to prepare, the more so under load.
    for (int i = 0; i < 2000 && zygote::PreparedReady() == 0; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GT(zygote::PreparedReady(), 0u) << "no sandbox was prepared";
  }
  const std::uint64_t prepared_before = zygote::PreparedLaunches();
  // The secrets' ancestors include /tmp, whose listing the plan's Landlock rules hold: a test
  // running beside this one can change the plan's shape, and then the next command is offered
  // no prepared sandbox (the filler starts over for the new shape). Until a round of commands
  // ran with the shape unchanged, run another (each round's first command is offered one).
  for (int round = 0; round < 5; ++round) {
    const std::uint64_t changes = zygote::PreparedShapeChanges();
    for (int i = 0; i < 3; ++i) {
      const RunResult result = Shell(*session, text);
      EXPECT_EQ(result.stdout_data.data, "plain\n") << Describe(result);
      std::this_thread::sleep_for(300ms);  // time for the filler to prepare, were it to
    }
    if (zygote::PreparedShapeChanges() == changes) break;
  }
  EXPECT_EQ(zygote::PreparedLaunches(), prepared_before) << "a view it could not check";
  if (prepared()) {
    EXPECT_EQ(zygote::PreparedReady(), 0u) << "it went on preparing";
  }
}

TEST_P(ZygoteTest, ASmallOpenFilesLimitHoldsAndItsCommandsAreNotPrepared) {
  // A prepared process would lower RLIMIT_NOFILE before it receives the command's three
  // descriptors, which a limit this small would keep out: such a session prepares nothing.
  Config config = MakeConfig();
  config.limits.open_files = 5;
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::uint64_t before = zygote::PreparedLaunches();
  const std::uint64_t joined = zygote::ZygoteLaunches();
  for (int i = 0; i < 3; ++i) {
    const RunResult limit = Shell(*session, "ulimit -n");
    EXPECT_EQ(limit.stdout_data.data, "5\n") << Describe(limit);
    std::this_thread::sleep_for(100ms);  // time the filler would have had
  }
  if (InLibrary()) {
    EXPECT_EQ(zygote::ZygoteLaunches(), joined + 3);  // through the zygote all the same
    EXPECT_EQ(zygote::PreparedLaunches(), before);
    EXPECT_EQ(zygote::PreparedReady(), 0u);
  }
}

TEST_P(ZygoteTest, ALongLivedSessionOnBwrapLaunchesEveryCommandThroughBwrap) {
  if (!UnderBwrap()) GTEST_SKIP() << "native backend: the cases above cover the zygote";
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::uint64_t before = zygote::ZygoteLaunches();
  for (int i = 0; i < 2; ++i) {
    const RunResult inside = Shell(*session, fmt::format("echo hi > inside{}", i));
    EXPECT_EQ(inside.exit_code, 0) << Describe(inside);
    EXPECT_EQ(inside.enforcement.backend, "bwrap");
    EXPECT_EQ(ReadFile(workspace_ / fmt::format("inside{}", i)), "hi\n");
    // Twin: a write outside still does not land.
    const std::filesystem::path etc = fmt::format("/etc/cordon-zygote-bwrap-{}-{}", unique_, i);
    cleanup_.push_back(etc);
    (void)Shell(*session, "echo x > " + etc.string());
    EXPECT_FALSE(Exists(etc));
  }
  EXPECT_EQ(zygote::ZygoteLaunches(), before);
}

INSTANTIATE_TEST_SUITE_P(Zygote, ZygoteTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? "Prepared" : "Direct";
                         });

}  // namespace
}  // namespace cordon::kernel_test
