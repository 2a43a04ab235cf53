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

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

class ZygoteTest : public KernelTest, public ::testing::WithParamInterface<bool> {
 protected:
  bool prepared() const { return GetParam(); }

  void SetUp() override {
    KernelTest::SetUp();
    session_options_ = {.long_lived = true, .prepared_commands = prepared() ? 2 : 0};
    // The caller's home from the password database, not the test's home under /tmp: the plan's
    // Landlock read rules list the entries of each ancestor of a credential path, and /tmp's
    // change with every test running beside this one, which would change the plan's shape
    // (and discard the prepared sandboxes) between any two commands.
    ::unsetenv("HOME");
    // Served or through `cordon mcp`, the server's own zygote and prepared sandboxes run the
    // commands, with its settings: one variant runs there, without this process's counters.
    if (!prepared()) {
      CORDON_SKIP_UNLESS_LIBRARY("the Prepared variant runs these cases");
    }
    // Except the case below that pins exactly this.
    if (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) !=
        "ALongLivedSessionOnBwrapLaunchesEveryCommandThroughBwrap") {
      CORDON_SKIP_UNDER_BWRAP("the zygote serves only the native backend");
    }
  }
  void TearDown() override {
    ExpectSomePreparedStarts();
    KernelTest::TearDown();
  }

  // Runs `text` and checks it went through the zygote; in the Prepared variant, a session's
  // commands after its first must have started in a prepared sandbox.
  RunResult Joined(const Session& session, const std::string& text,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    const bool expect_prepared = prepared() && !first_of_.insert(&session).second;
    if (!InLibrary()) {
      if (expect_prepared) std::this_thread::sleep_for(300ms);  // the server prepares
      return Shell(session, text, timeout);
    }
    if (expect_prepared) {
      for (int i = 0; i < 500 && zygote::PreparedReady() == 0; ++i) {
        std::this_thread::sleep_for(10ms);
      }
    }
    const std::uint64_t before = zygote::ZygoteLaunches();
    const std::uint64_t before_prepared = zygote::PreparedLaunches();
    const std::uint64_t before_changes = zygote::PreparedShapeChanges();
    RunResult result = Shell(session, text, timeout);
    EXPECT_EQ(zygote::ZygoteLaunches(), before + 1)
        << "not launched through the zygote: " << Describe(result);
    const bool started_prepared = zygote::PreparedLaunches() == before_prepared + 1;
    if (!expect_prepared) {
      EXPECT_FALSE(started_prepared) << "started in a prepared sandbox: " << Describe(result);
    } else if (started_prepared) {
      ++prepared_starts_;
    } else {
      // Only a change of the plan's shape (the host changed under the session) may explain it.
      EXPECT_GT(zygote::PreparedShapeChanges(), before_changes)
          << "not started in a prepared sandbox: " << Describe(result);
    }
    expected_starts_ += expect_prepared ? 1 : 0;
    return result;
  }

  // Prepared variant: waits until the session has a prepared sandbox ready (after its first
  // command), so that the next command can start in it.
  void WaitForPrepared() {
    if (!prepared()) return;
    if (!InLibrary()) {  // the server's prepared sandboxes: time to prepare one
      std::this_thread::sleep_for(300ms);
      return;
    }
    for (int i = 0; i < 500 && zygote::PreparedReady() == 0; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GT(zygote::PreparedReady(), 0u) << "no sandbox was prepared";
  }

  void ExpectSomePreparedStarts() {
    if (expected_starts_ > 0) {
      EXPECT_GT(prepared_starts_, 0)
          << "none of " << expected_starts_ << " commands started in a prepared sandbox";
    }
  }

  std::set<const Session*> first_of_;  // sessions that ran a command through Joined
  int expected_starts_ = 0;
  int prepared_starts_ = 0;
};

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
  // Twin first: within one command the private /tmp, /var/tmp, /dev/shm and HOME work.
  const RunResult first =
      Joined(*session,
             "echo a > /tmp/left && echo b > /var/tmp/left && echo c > /dev/shm/left && "
             "echo d > \"$HOME/left\" && cat /tmp/left /var/tmp/left /dev/shm/left \"$HOME/left\"");
  EXPECT_EQ(first.stdout_data.data, "a\nb\nc\nd\n") << Describe(first);
  // The next command of the same session finds none of it.
  const RunResult second = Joined(
      *session,
      "ls -A /tmp /var/tmp /dev/shm \"$HOME\"; test ! -e /tmp/left && test ! -e /var/tmp/left "
      "&& test ! -e /dev/shm/left && test ! -e \"$HOME/left\" && test -d \"$HOME\"");
  EXPECT_EQ(second.status, RunStatus::kExited) << Describe(second);
  EXPECT_EQ(second.exit_code, 0) << Describe(second);
  // Nor on the host.
  EXPECT_FALSE(Exists("/tmp/left"));
  // The workspace (here under the host's /tmp, re-attached on each fresh /tmp) persists.
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
  std::thread other([&] { a = Shell(*session, "echo a > /tmp/mine; sleep 0.5; cat /tmp/mine"); });
  std::this_thread::sleep_for(100ms);
  b = Shell(*session, "sleep 0.1; test ! -e /tmp/mine && echo b > /tmp/mine; cat /tmp/mine");
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

// The host replaces a masked file while the session lives (an atomic save, `git checkout`,
// what passwd does to /etc/shadow): the kernel detaches every mount on the old file, in every
// mount namespace, so a zygote or prepared sandbox built before still has the path but no
// longer the mask. The plan names each mask's target by device and inode: a command must not
// run in a sandbox whose masks were made over another file.
TEST_P(ZygoteTest, ASecretReplacedOnTheHostWhileTheSessionLivesIsStillHidden) {
  Config config = MakeConfig();
  const std::filesystem::path secret = std::filesystem::canonical(workspace_) / "app.env";
  { std::ofstream(secret) << "TOKEN=first\n"; }
  config.sandbox.hidden_paths.push_back(secret);
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult before = Joined(*session, "cat app.env; echo end");
  EXPECT_EQ(before.stdout_data.data, "end\n") << Describe(before);
  WaitForPrepared();
  // Atomic save: a new file renamed over the masked one.
  { std::ofstream(workspace_ / "app.env.new") << "TOKEN=renamed\n"; }
  std::filesystem::rename(workspace_ / "app.env.new", secret);
  const RunResult renamed = Joined(*session, "cat app.env; echo end");
  EXPECT_EQ(renamed.stdout_data.data, "end\n") << Describe(renamed);
  WaitForPrepared();
  // Unlinked and created again.
  std::filesystem::remove(secret);
  { std::ofstream(secret) << "TOKEN=recreated\n"; }
  const RunResult recreated = Joined(*session, "cat app.env; echo end");
  EXPECT_EQ(recreated.stdout_data.data, "end\n") << Describe(recreated);
  // Twin: a file saved the same way but not hidden is read as it is now.
  { std::ofstream(workspace_ / "plain.new") << "plain\n"; }
  std::filesystem::rename(workspace_ / "plain.new", workspace_ / "plain.txt");
  EXPECT_EQ(Joined(*session, "cat plain.txt").stdout_data.data, "plain\n");
  // Nothing changed since: the next command starts in a sandbox prepared over the new file,
  // and the mask holds there too. (Again while something else on the host changes the shape
  // meanwhile, a socket bound elsewhere by a test running beside this one, say.)
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    const RunResult again = Joined(*session, "cat app.env; echo end");
    EXPECT_EQ(again.stdout_data.data, "end\n") << Describe(again);
  }
}

// The window between a command's plan and its start: the host saves a masked file atomically
// after the plan named the old file (Caller::before_start runs right there), so the
// zygote's or the prepared sandbox's mask over it is detached by the kernel when the command
// starts in it. The command must still not read the new file (before: it did, for that one
// command).
TEST_P(ZygoteTest, ASecretReplacedBetweenPlanAndStartIsStillHidden) {
  CORDON_SKIP_UNLESS_LIBRARY("before_start runs in this process");
  Config config = MakeConfig();
  const std::filesystem::path secret = std::filesystem::canonical(workspace_) / "app.env";
  { std::ofstream(secret) << "TOKEN=first\n"; }
  config.sandbox.hidden_paths.push_back(secret);
  auto session = SessionOrSkip(config);
  if (!session) return;
  EXPECT_EQ(Joined(*session, "cat app.env; echo end").stdout_data.data, "end\n");
  for (int i = 0; i < 3; ++i) {
    WaitForPrepared();
    CommandRequest request;
    request.shell_text = "cat app.env; cat plain.txt";
    session::Caller caller;
    caller.before_start = [&]() -> Result<void> {
      // Saved atomically on the host, each with a file beside it saved the same way (the twin:
      // read as it is now).
      std::ofstream(workspace_ / "app.env.new") << "TOKEN=saved" << i << "\n";
      std::filesystem::rename(workspace_ / "app.env.new", secret);
      std::ofstream(workspace_ / "plain.new") << "plain" << i << "\n";
      std::filesystem::rename(workspace_ / "plain.new", workspace_ / "plain.txt");
      return {};
    };
    const RunResult raced = session::RunFor(*session, request, caller);
    EXPECT_EQ(raced.stdout_data.data, fmt::format("plain{}\n", i)) << Describe(raced);
  }
}

// The same for a file only root may read in /etc (masked for a root caller), replaced the way
// useradd and passwd replace /etc/shadow. Planted in /etc, outside the private /tmp.
TEST_P(ZygoteTest, ARootOnlyFileReplacedOnTheHostIsStillHidden) {
  if (::geteuid() != 0) GTEST_SKIP() << "root-only files are masked for a root caller only";
  const std::filesystem::path secret = fmt::format("/etc/cordon-zygote-shadow-{}", unique_);
  const std::filesystem::path next = secret.string() + ".new";
  cleanup_.push_back(secret);
  cleanup_.push_back(next);
  auto plant = [](const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  };
  plant(secret, "root:first\n");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string read = fmt::format("cat {}; echo end", secret.string());
  const RunResult before = Joined(*session, read);
  EXPECT_EQ(before.stdout_data.data, "end\n") << Describe(before);
  WaitForPrepared();
  plant(next, "root:renamed\n");
  std::filesystem::rename(next, secret);
  const RunResult after = Joined(*session, read);
  EXPECT_EQ(after.stdout_data.data, "end\n") << Describe(after);
  // Twin: a world-readable file in /etc replaced the same way is read as it is now.
  const std::filesystem::path open = fmt::format("/etc/cordon-zygote-open-{}", unique_);
  cleanup_.push_back(open);
  { std::ofstream(open) << "open\n"; }
  EXPECT_EQ(Joined(*session, "cat " + open.string()).stdout_data.data, "open\n");
}

// The built-in credential locations of the caller's home, replaced on the host while the
// session lives: a file saved atomically (.netrc), a file unlinked and written again
// (.codex/auth.json), and a whole masked directory renamed over by a new one (.aws). The home
// is planted under /var/lib, outside the private /tmp, so that an unmasked file would be read.
TEST_P(ZygoteTest, BuiltInCredentialsReplacedOnTheHostStayHidden) {
  if (::geteuid() != 0) GTEST_SKIP() << "plants a home under /var/lib, which needs root";
  const std::filesystem::path base = fmt::format("/var/lib/cordon-zygote-home-{}", unique_);
  const std::filesystem::path home = base / "home";
  std::filesystem::create_directories(home / ".aws");
  std::filesystem::create_directories(home / ".codex");
  struct Remove {
    std::filesystem::path path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove{base};
  auto save = [](const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path.string() + ".new") << text;
    std::filesystem::rename(path.string() + ".new", path);
  };
  save(home / ".netrc", "machine m password netrc-0\n");
  save(home / ".aws" / "credentials", "aws-0\n");
  save(home / ".codex" / "auth.json", "codex-0\n");
  save(home / "notes.txt", "notes-0\n");
  ::setenv("HOME", home.c_str(), 1);  // the caller's home (TearDown puts the test's back)
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string read = fmt::format(
      "cd '{}' && cat .netrc .aws/credentials .codex/auth.json 2>/dev/null; cat notes.txt",
      home.string());
  EXPECT_EQ(Joined(*session, read).stdout_data.data, "notes-0\n");
  for (int i = 1; i <= 2; ++i) {
    WaitForPrepared();
    save(home / ".netrc", fmt::format("machine m password netrc-{}\n", i));
    std::filesystem::remove(home / ".codex" / "auth.json");
    std::ofstream(home / ".codex" / "auth.json") << fmt::format("codex-{}\n", i);
    std::filesystem::create_directory(home / ".aws.new");
    std::ofstream(home / ".aws.new" / "credentials") << fmt::format("aws-{}\n", i);
    std::filesystem::remove_all(home / ".aws");
    std::filesystem::rename(home / ".aws.new", home / ".aws");
    // Twin: a file of the home saved the same way, not a credential, is read as it is now.
    save(home / "notes.txt", fmt::format("notes-{}\n", i));
    const RunResult after = Joined(*session, read);
    EXPECT_EQ(after.stdout_data.data, fmt::format("notes-{}\n", i)) << Describe(after);
  }
  // Nothing changed since: the next command starts in a sandbox prepared over the new files.
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    const RunResult again = Joined(*session, read);
    EXPECT_EQ(again.stdout_data.data, "notes-2\n") << Describe(again);
  }
}

// A repository's tracked secret (sandbox.hidden_paths) and its .git, while the host runs
// `git checkout` between two commits during a session: git replaces the files it checks out,
// and the secret must stay hidden and .git read-only in every later command.
TEST_P(ZygoteTest, AGitCheckoutOnTheHostKeepsATrackedSecretHiddenAndGitReadOnly) {
  const std::filesystem::path ws = std::filesystem::canonical(workspace_);
  const std::string git = fmt::format(
      "cd '{}' && git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main "
      "-c core.hooksPath=/dev/null -c gc.auto=0 -c maintenance.auto=false",
      ws.string());
  auto host = [&](const std::string& command) {
    return std::system((git + " " + command + " >/dev/null 2>&1").c_str());
  };
  std::ofstream(ws / "app.env") << "TOKEN=one\n";
  std::ofstream(ws / "README") << "one\n";
  ASSERT_EQ(host("init -q"), 0);
  ASSERT_EQ(host("add app.env README && " + git + " commit -q -m one"), 0);
  std::ofstream(ws / "app.env") << "TOKEN=two\n";
  std::ofstream(ws / "README") << "two\n";
  ASSERT_EQ(host("commit -q -am two"), 0);
  Config config = MakeConfig();
  config.sandbox.hidden_paths.push_back(ws / "app.env");
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::string read = "cat app.env; cat README";
  EXPECT_EQ(Joined(*session, read).stdout_data.data, "two\n");
  for (const char* commit : {"HEAD~1", "main"}) {
    WaitForPrepared();
    ASSERT_EQ(host(fmt::format("checkout -q {}", commit)), 0) << commit;
    const RunResult after = Joined(*session, read);
    // Twin: the tracked file beside it is read as the checkout left it.
    EXPECT_EQ(after.stdout_data.data, std::string(commit) == "main" ? "two\n" : "one\n")
        << commit << ": " << Describe(after);
    WaitForPrepared();  // nothing changed since the read: a sandbox prepared over the new file
    const RunResult hook = Joined(*session, "echo 'touch pwned' > .git/hooks/post-checkout");
    EXPECT_NE(hook.exit_code, 0) << commit << ": " << Describe(hook);
    EXPECT_FALSE(Exists(ws / ".git" / "hooks" / "post-checkout")) << commit;
  }
  // Nothing changed since: the next command starts in a sandbox prepared over the files the
  // last checkout left (on a busy machine the host may still be settling at first).
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    EXPECT_EQ(Joined(*session, read).stdout_data.data, "two\n");
  }
}

// A workspace that is the host's /var/tmp itself: one-shot binds it over the private /var/tmp;
// each command of a zygote gets a fresh private tmpfs there, which must not cover the bind.
TEST_P(ZygoteTest, AWorkspaceThatIsVarTmpIsTheHostsOwnInEveryCommand) {
  const std::filesystem::path var_tmp = std::filesystem::canonical("/var/tmp");
  const std::string planted = fmt::format("cordon-zygote-planted-{}", unique_);
  const std::string written = fmt::format("cordon-zygote-written-{}", unique_);
  cleanup_.push_back(var_tmp / planted);
  cleanup_.push_back(var_tmp / written);
  { std::ofstream(var_tmp / planted) << "planted\n"; }
  auto session = SessionOrSkip(MakeConfig(), var_tmp);
  if (!session) return;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) WaitForPrepared();
    const RunResult read =
        Joined(*session, fmt::format("cat {}; echo {} > {}", planted, i, written));
    EXPECT_EQ(read.stdout_data.data, "planted\n") << Describe(read);
    EXPECT_EQ(read.exit_code, 0) << Describe(read);
    EXPECT_EQ(ReadFile(var_tmp / written), fmt::format("{}\n", i));
  }
  // Twin: the private /tmp of each command is still fresh (nothing of the host's there).
  const RunResult tmp = Joined(*session, "ls -A /tmp | grep -v '^.cordon-home$' | wc -l");
  EXPECT_EQ(tmp.stdout_data.data, "0\n") << Describe(tmp);
}

// The session's workspace is the directory it started in: its name swapped for a link to
// another directory (by anything that can write the parent, a concurrent command included) is
// refused, never bound writable in its place; swapped back, it runs again.
TEST_P(ZygoteTest, AWorkspaceSwappedForALinkIsRefusedNotBoundInItsPlace) {
  // Each `cordon run` names its directory afresh, as a one-shot run does (the race between
  // naming and serving it: ServedEquivalence); a kept session (library, MCP) is pinned.
  if (TestKernelPath() == KernelPath::kServer) {
    GTEST_SKIP() << "server path: every cordon run is a new caller of its directory";
  }
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  EXPECT_EQ(Joined(*session, "true").exit_code, 0);
  const std::filesystem::path elsewhere = root_ / "elsewhere";
  std::filesystem::create_directory(elsewhere);
  std::filesystem::rename(workspace_, root_ / "ws.moved");
  std::filesystem::create_directory_symlink(elsewhere, workspace_);
  const RunResult swapped = Shell(*session, "echo x > planted");
  EXPECT_EQ(swapped.status, RunStatus::kSetupFailed) << Describe(swapped);
  // The session's check, or (through cordon mcp) its working directory resolved first.
  EXPECT_TRUE(swapped.error.find("no longer the directory") != std::string::npos ||
              swapped.error.find("is outside the workspace") != std::string::npos)
      << Describe(swapped);
  EXPECT_FALSE(Exists(elsewhere / "planted"));
  // Another directory (not a link) at the same name: refused as well.
  std::filesystem::remove(workspace_);
  std::filesystem::create_directory(workspace_);
  const RunResult replaced = Shell(*session, "echo x > planted");
  EXPECT_EQ(replaced.status, RunStatus::kSetupFailed) << Describe(replaced);
  EXPECT_FALSE(Exists(workspace_ / "planted"));
  // Twin: the session's own directory back in place runs and writes there.
  std::filesystem::remove(workspace_);
  std::filesystem::rename(root_ / "ws.moved", workspace_);
  const RunResult back = Joined(*session, "echo x > planted");
  EXPECT_EQ(back.exit_code, 0) << Describe(back);
  EXPECT_EQ(ReadFile(workspace_ / "planted"), "x\n");
  // Nothing changed since: the next command starts in a sandbox prepared for it.
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    EXPECT_EQ(Joined(*session, "cat planted").stdout_data.data, "x\n");
  }
}

// A configured writable root nested in the workspace is pinned too: a command that replaces it
// with a link to a directory outside (it can: the workspace is writable) must not make the
// next run bind the link's target writable.
TEST_P(ZygoteTest, AWritableRootReplacedWithALinkIsRefusedNotBoundInItsPlace) {
  const std::filesystem::path cache = workspace_ / "cache";
  const std::filesystem::path outside = root_ / "outside";
  std::filesystem::create_directory(cache);
  std::filesystem::create_directory(outside);
  Config config = MakeConfig();
  config.sandbox.writable_roots = {cache};
  auto session = SessionOrSkip(config);
  if (!session) return;
  // Twin first: the root is writable as configured.
  const RunResult twin = Joined(*session, "echo x > cache/made");
  EXPECT_EQ(twin.exit_code, 0) << Describe(twin);
  EXPECT_TRUE(Exists(cache / "made"));
  // The command itself swaps the root for a link to a directory outside the workspace.
  const RunResult swap =
      Joined(*session, fmt::format("mv cache cache.old && ln -s {} cache", outside.string()));
  EXPECT_EQ(swap.exit_code, 0) << Describe(swap);
  const RunResult next = Shell(*session, fmt::format("echo x > {}/planted", outside.string()));
  EXPECT_EQ(next.status, RunStatus::kSetupFailed) << Describe(next);
  // A kept session refuses the change; a new one (each served `cordon run`) the planted link.
  EXPECT_TRUE(next.error.find("no longer what this session started with") != std::string::npos ||
              next.error.find("a symbolic link inside") != std::string::npos)
      << Describe(next);
  EXPECT_FALSE(Exists(outside / "planted"));
  // Put back, it runs again.
  std::filesystem::remove(cache);
  std::filesystem::rename(workspace_ / "cache.old", cache);
  EXPECT_EQ(Shell(*session, "echo y > cache/again").exit_code, 0);
  EXPECT_TRUE(Exists(cache / "again"));
}

// The first runs of a session, at once, in a workspace without .git: a run planned before
// another one made the session's .git placeholder is planned again, never launched without
// the placeholder's read-only bind (a hook planted in it would run on the host's next git).
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
  for (int i = 0; i < 3; ++i) {
    const RunResult result = Shell(*session, text);  // the first one is offered a prepared one
    EXPECT_EQ(result.stdout_data.data, "plain\n") << Describe(result);
    std::this_thread::sleep_for(300ms);  // time for the filler to prepare, were it to
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
