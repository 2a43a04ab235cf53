// Prepared commands (ADR 0023) through the zygote's API: the life of one prepared sandbox,
// checked from outside. The guarantees of the commands that run in them are the zygote suite's
// Prepared variant (zygote_test.cc); these are the cases a session only meets by accident: a
// prepared sandbox nobody takes, one that died before its command came, a command that cannot
// start in one.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <thread>

#include "core/close_later.h"
#include "kernel_support.h"
#include "linux/init_reaper.h"
#include "linux/kernel_features.h"
#include "plan/host_placeholders.h"
#include "plan/launch_plan.h"
#include "session/request.h"
#include "zygote/prepared_command.h"
#include "zygote/zygote.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

class PreparedTest : public KernelTest {
 protected:
  void SetUp() override {
    KernelTest::SetUp();
    CORDON_SKIP_UNDER_BWRAP("prepared commands serve only the native backend");
    if (!features_.namespaces_usable()) {
      if (MustWork()) FAIL() << "user namespaces are not usable here";
      GTEST_SKIP() << "user namespaces are not usable here";
    }
  }

  // The plan of shell `text` in the workspace, as a session would make it.
  std::optional<plan::LaunchPlan> PlanShell(const std::string& text) {
    plan::PlanRequest request;
    request.argv = {"/bin/sh", "-c", text};
    request.workspace = workspace_;
    request.cwd = workspace_;
    request.caller_env = session::CallerEnvironment();
    request.caller_home = home_;
    // Nothing here answers the seccomp listener the way a run's supervisor does: the writes
    // the observer would stop at must not be sent to it (decision 0048).
    Config config = MakeConfig();
    config.sandbox.explain_file_denials = false;
    Result<plan::LaunchPlan> planned = plan::Plan(config, features_, request);
    EXPECT_TRUE(planned) << planned.error().message;
    if (!planned) return std::nullopt;
    // The absent .git and host-run files held for the test's commands, as a session holds them
    // for each of its own (the prepared command covers them when it starts).
    Result<plan::HostPlaceholders> held = plan::HostPlaceholders::Hold(planned->placeholders);
    EXPECT_TRUE(held) << held.error().message;
    if (!held) return std::nullopt;
    planned->placeholders = held->covered();
    placeholders_.push_back(std::move(*held));
    return *planned;
  }
  std::vector<plan::HostPlaceholders> placeholders_;

  std::unique_ptr<zygote::Zygote> StartZygote(const plan::LaunchPlan& plan) {
    Result<std::unique_ptr<zygote::Zygote>> started = zygote::Zygote::Start(plan);
    EXPECT_TRUE(started) << started.error().message;
    return started ? std::move(*started) : nullptr;
  }

  std::unique_ptr<zygote::PreparedCommand> Prepare(const zygote::Zygote& z,
                                                   const plan::LaunchPlan& plan) {
    Result<std::unique_ptr<zygote::PreparedCommand>> prepared = z.Prepare(plan);
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? std::move(*prepared) : nullptr;
  }

  // A zygote for `plan` and one prepared command of it (the zygote must outlive the command).
  struct ZygoteAndPrepared {
    std::unique_ptr<zygote::Zygote> zygote;
    std::unique_ptr<zygote::PreparedCommand> prepared;
    explicit operator bool() const { return zygote && prepared; }
  };
  ZygoteAndPrepared StartAndPrepare(const plan::LaunchPlan& plan) {
    ZygoteAndPrepared both;
    both.zygote = StartZygote(plan);
    if (both.zygote) both.prepared = Prepare(*both.zygote, plan);
    return both;
  }

  // Runs a started prepared command to its end; the init's status pipe gives its wait status.
  static int WaitStatus(exec::LaunchedProcess& launched) {
    int status = -1;
    while (::read(launched.status_fd.get(), &status, sizeof status) < 0 && errno == EINTR) {
    }
    while (::waitpid(launched.pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  // Prepares `plan` in a zygote of its own, starts it and returns the command's wait status
  // (-1 when it could not be prepared or started; the failure is recorded).
  int RunPrepared(const plan::LaunchPlan& plan) {
    auto [z, prepared] = StartAndPrepare(plan);
    if (!prepared) return -1;
    Result<exec::LaunchedProcess> started = prepared->Start(plan, exec::StdioFds{});
    EXPECT_TRUE(started) << started.error().message;
    return started ? WaitStatus(*started) : -1;
  }

  // True once no process has `pid`: not running, and not a zombie waiting to be reaped.
  static bool Gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

  // The prepared process (cordon-init --exec), the only child of the prepared init.
  static pid_t StubOf(pid_t init) {
    const std::string children = ReadFile(fmt::format("/proc/{0}/task/{0}/children", init));
    return children.empty() ? -1 : static_cast<pid_t>(std::stol(children));
  }

  linux_native::KernelFeatures features_ = linux_native::ProbeKernel();
};

TEST_F(PreparedTest, AnUnusedPreparedSandboxIsKilledWhenItIsDropped) {
  auto plan = PlanShell("true");
  if (!plan) return;
  auto [z, prepared] = StartAndPrepare(*plan);
  ASSERT_TRUE(z && prepared);
  const pid_t pid = prepared->pid();
  ASSERT_GT(pid, 0);
  const pid_t stub = StubOf(pid);
  ASSERT_GT(stub, 0);
  // Twin: while held, both are there and waiting.
  EXPECT_TRUE(prepared->Alive());
  EXPECT_EQ(::kill(pid, 0), 0);
  EXPECT_EQ(::kill(stub, 0), 0);
  // The execve that closed the error pipe (so Prepare returned) may not have set up the new
  // argument area yet: its close-on-exec step comes before the program is loaded.
  std::string cmdline;
  for (int i = 0; i < 100 && cmdline.find("--exec") == std::string::npos; ++i) {
    if (i > 0) std::this_thread::sleep_for(10ms);
    cmdline = ReadFile(fmt::format("/proc/{}/cmdline", stub));
  }
  EXPECT_NE(cmdline.find("--exec"), std::string::npos) << cmdline;
  prepared.reset();
  EXPECT_TRUE(Gone(pid)) << "the prepared sandbox's init " << pid << " outlived its owner";
  for (int i = 0; i < 300 && !Gone(stub); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(Gone(stub)) << "the prepared process " << stub << " outlived its sandbox";
}

// Its placeholders were made after the sandbox was built: they are covered when the command
// starts (zygote/cover_relay.h), so an absent host-run file cannot be created in it either.
TEST_F(PreparedTest, PlaceholdersMadeAfterItWasBuiltAreCoveredBeforeTheCommandStarts) {
  std::optional<plan::LaunchPlan> plan = PlanShell(
      "echo '{}' > .mcp.json; mkdir -p .claude/hooks; echo pwned > .claude/hooks/x; "
      "echo ok > notes.txt");
  ASSERT_TRUE(plan);
  ASSERT_FALSE(plan->placeholders.empty());
  const int status = RunPrepared(*plan);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(ReadFile(workspace_ / "notes.txt"), "ok\n");  // the twin: beside them
  EXPECT_FALSE(std::filesystem::is_regular_file(workspace_ / ".mcp.json"));
  EXPECT_FALSE(Exists(workspace_ / ".claude/hooks/x"));
}

TEST_F(PreparedTest, ACommandStartsInItAndWritesOnlyWhereAllowed) {
  auto plan = PlanShell("echo hi > prepared-inside");
  if (!plan) return;
  auto [z, prepared] = StartAndPrepare(*plan);
  ASSERT_TRUE(z && prepared);
  Result<exec::LaunchedProcess> started = prepared->Start(*plan, exec::StdioFds{});
  ASSERT_TRUE(started) << started.error().message;
  const int status = WaitStatus(*started);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(ReadFile(workspace_ / "prepared-inside"), "hi\n");
  // Denied twin in a second prepared sandbox of the same zygote: /etc is read-only.
  const std::filesystem::path etc = "/etc/cordon-prepared-" + unique_;
  cleanup_.push_back(etc);
  auto outside = PlanShell("echo x > " + etc.string());
  ASSERT_TRUE(outside);
  auto second = Prepare(*z, *outside);
  ASSERT_TRUE(second);
  started = second->Start(*outside, exec::StdioFds{});
  ASSERT_TRUE(started) << started.error().message;
  const int denied = WaitStatus(*started);
  EXPECT_TRUE(WIFEXITED(denied) && WEXITSTATUS(denied) != 0) << denied;
  EXPECT_FALSE(Exists(etc));
}

// The descriptors of this process that name `link` ("mnt:[INODE]").
int HoldersOf(const std::string& link) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(entry.path(), ec).string() == link) ++count;
  }
  return count;
}

TEST_F(PreparedTest, ItsMountNamespaceOutlivesInitUntilTheRunIsOverAndIsThenReleased) {
  auto plan = PlanShell("readlink /proc/self/ns/mnt > prepared-ns");
  if (!plan) return;
  std::unique_ptr<zygote::Zygote> z = StartZygote(*plan);
  ASSERT_TRUE(z);
  // Several runs: the hold was once taken through init's /proc entry, which an unprivileged
  // supervisor may not open while init is non-dumpable, a window one run in five fell into.
  for (int run = 0; run < 20; ++run) {
    SCOPED_TRACE(fmt::format("run {}", run));
    std::unique_ptr<zygote::PreparedCommand> prepared = Prepare(*z, *plan);
    ASSERT_TRUE(prepared);
    std::optional<Result<exec::LaunchedProcess>> started = prepared->Start(*plan, exec::StdioFds{});
    ASSERT_TRUE(*started) << started->error().message;
    const int status = WaitStatus(**started);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    std::string ns = ReadFile(workspace_ / "prepared-ns");
    if (!ns.empty() && ns.back() == '\n') ns.pop_back();
    ASSERT_TRUE(ns.starts_with("mnt:[")) << ns;
    // init is reaped: its namespace is held here (its teardown is not in init's exit), and
    // by nothing that could enter it but this process.
    EXPECT_EQ(HoldersOf(ns), 1) << ns;
    // Twin: once the run's process is dropped, the hold is released (closed on the closing
    // thread), not kept for the life of the session.
    started.reset();
    core::WaitForClosed();
    EXPECT_EQ(HoldersOf(ns), 0) << ns << " is still held after the run";
  }
}

TEST_F(PreparedTest, ASandboxThatDiedBeforeItsCommandCameRunsNothing) {
  auto plan = PlanShell("echo hi > prepared-mark");
  if (!plan) return;
  auto [z, prepared] = StartAndPrepare(*plan);
  ASSERT_TRUE(z && prepared);
  ASSERT_EQ(::kill(prepared->pid(), SIGKILL), 0);
  for (int i = 0; i < 500 && prepared->Alive(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(prepared->Alive());
  Result<exec::LaunchedProcess> started = prepared->Start(*plan, exec::StdioFds{});
  ASSERT_FALSE(started) << "a dead prepared sandbox took a command";
  EXPECT_EQ(started.error().code, ErrorCode::kUnavailable) << started.error().message;
  EXPECT_FALSE(Exists(workspace_ / "prepared-mark"));
}

TEST_F(PreparedTest, ACommandThatCannotStartFailsLikeAOneShotLaunchAndLeavesNothing) {
  auto plan = PlanShell("true");
  if (!plan) return;
  auto [z, prepared] = StartAndPrepare(*plan);
  ASSERT_TRUE(z && prepared);
  const pid_t pid = prepared->pid();
  plan::LaunchPlan missing = *plan;
  missing.argv = {"cordon-no-such-command-" + unique_};
  Result<exec::LaunchedProcess> started = prepared->Start(missing, exec::StdioFds{});
  ASSERT_FALSE(started);
  EXPECT_EQ(started.error().code, ErrorCode::kCommandNotFound) << started.error().message;
  EXPECT_NE(started.error().message.find("execve"), std::string::npos) << started.error().message;
  EXPECT_TRUE(Gone(pid)) << "the sandbox of a command that never started is still there";
  // Its working directory gone: reported as chdir, nothing left either.
  auto again = Prepare(*z, *plan);
  ASSERT_TRUE(again);
  const pid_t second = again->pid();
  plan::LaunchPlan elsewhere = *plan;
  elsewhere.cwd = workspace_ / "gone";
  started = again->Start(elsewhere, exec::StdioFds{});
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("chdir"), std::string::npos) << started.error().message;
  EXPECT_TRUE(Gone(second));
}

// Where cordon-init lies outside the sandbox's view (a build tree below the host's /tmp, which
// the sandbox replaces), the prepared process still execs it: through the descriptor opened on
// the host, with a Landlock rule for that one file (reads are handled for the credential
// allow-list). Regression: without the rule, exec failed with EACCES and no command was ever
// prepared.
TEST_F(PreparedTest, ACordonInitOutsideTheSandboxsViewStillTakesTheCommand) {
  auto plan = PlanShell("echo hi > prepared-hidden-init");
  if (!plan) return;
  ASSERT_NE(plan->landlock.abi, 0) << "this case needs Landlock";
  char pattern[] = "/tmp/cordon-init-stage.XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path stage = pattern;
  struct RemoveStage {
    std::filesystem::path path;
    ~RemoveStage() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove_stage{stage};
  ASSERT_EQ(::chmod(stage.c_str(), 0755), 0);
  std::filesystem::copy_file(SuiteInitReaper(), stage / "cordon-init");
  struct RestoreReaper {
    ~RestoreReaper() { linux_native::SetInitReaperPath(SuiteInitReaper()); }
  } restore_reaper;
  linux_native::SetInitReaperPath(stage / "cordon-init");
  ASSERT_EQ(linux_native::InitReaperFdFor(*plan) >= 0, true) << linux_native::InitReaperProblem();
  const int status = RunPrepared(*plan);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(ReadFile(workspace_ / "prepared-hidden-init"), "hi\n");
}

// The prepared command's one extra Landlock right (read and execute on cordon-init, which its
// stub execs) is not a right to change that file: the denied twin of the case above. As root
// the file is a copy in /var/lib, which the sandbox sees read-only; otherwise the suite's,
// which may lie below the host's /tmp, out of the sandbox's view (then only the check from
// outside applies).
TEST_F(PreparedTest, TheCordonInitAPreparedCommandMayExecCannotBeRewritten) {
  std::filesystem::path reaper = SuiteInitReaper();
  ASSERT_FALSE(reaper.empty()) << "no cordon-init configured for the suite";
  struct RestoreReaper {
    ~RestoreReaper() { linux_native::SetInitReaperPath(SuiteInitReaper()); }
  } restore_reaper;
  const bool visible = ::geteuid() == 0;
  if (visible) {
    const std::filesystem::path dir = "/var/lib/cordon-prepared-" + unique_;
    ASSERT_TRUE(std::filesystem::create_directory(dir));
    cleanup_.push_back(dir / "cordon-init");  // the file first: cleanup_ removes, not recurses
    cleanup_.push_back(dir);
    ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
    std::filesystem::copy_file(reaper, dir / "cordon-init");
    reaper = dir / "cordon-init";
    ASSERT_EQ(::chmod(reaper.c_str(), 0755), 0);
    linux_native::SetInitReaperPath(reaper);
  }
  struct stat before {};
  ASSERT_EQ(::stat(reaper.c_str(), &before), 0);
  auto plan = PlanShell(
      fmt::format("if [ ! -e '{0}' ]; then echo absent; "
                  "elif printf x >> '{0}' || true > '{0}' || rm -f '{0}'; then echo changed; "
                  "else echo refused; fi > prepared-reaper",
                  reaper.string()));
  if (!plan) return;
  ASSERT_NE(plan->landlock.abi, 0) << "this case needs Landlock";
  ASSERT_GE(linux_native::InitReaperFdFor(*plan), 0) << linux_native::InitReaperProblem();
  const int status = RunPrepared(*plan);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string seen = ReadFile(workspace_ / "prepared-reaper");
  if (visible) {
    EXPECT_EQ(seen, "refused\n");
  } else {
    EXPECT_TRUE(seen == "refused\n" || seen == "absent\n") << seen;
  }
  struct stat after {};
  ASSERT_EQ(::stat(reaper.c_str(), &after), 0) << "cordon-init was removed";
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
}

}  // namespace
}  // namespace cordon::kernel_test
