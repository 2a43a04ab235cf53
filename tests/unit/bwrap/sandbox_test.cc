// LaunchBwrap with real plans (plan::Plan on this machine's probe), checked from outside.
// The whole kernel suite runs over the bwrap backend through Session once it is selectable;
// these cases pin the launcher itself: the trampoline's layers, bwrap's setup errors, and the
// process tree.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bwrap/launch.h"
#include "core/unique_fd.h"
#include "exec/command_pipes.h"
#include "exec/supervisor.h"
#include "linux/kernel_features.h"
#include "plan/host_placeholders.h"
#include "plan/mount_identity.h"
#include "support/host_listener.h"

namespace cordon::bwrap {
namespace {

namespace fs = std::filesystem;

class BwrapSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    auto located = LocateBwrap({}, {});
    if (!located) {
      if (std::getenv("CORDON_TEST_MUST_WORK")) FAIL() << located.error().message;
      GTEST_SKIP() << located.error().message;
    }
    bwrap_ = *located;
    features_ = linux_native::ProbeKernel();
    char tmpl[] = "/var/tmp/cordon-bwrap-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ::chmod(root_.c_str(), 0755);
    fs::create_directories(root_ / "ws");
    fs::create_directories(root_ / "home/.ssh");
    std::ofstream(root_ / "home/.ssh/id_ed25519") << "canary-secret";
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  Result<plan::LaunchPlan> MakePlan(const std::string& shell, NetworkPolicy network) {
    Config config;
    config.sandbox.network = network;
    plan::PlanRequest request;
    request.argv = {"/bin/sh", "-c", shell};
    request.workspace = root_ / "ws";
    request.cwd = root_ / "ws";
    request.caller_env = {"PATH=/usr/bin:/bin", "CORDON_CANARY=leaked-canary"};
    request.caller_home = root_ / "home";
    return plan::Plan(config, features_, request);
  }

  RunResult Run(plan::LaunchPlan plan) {
    // As a session does for bubblewrap: the absent .git and host-run files held for the run,
    // as directories (the planner's choice for this backend; host_placeholders.h).
    for (plan::Placeholder& p : plan.placeholders) p.directory = true;
    Result<plan::HostPlaceholders> placeholders = plan::HostPlaceholders::Hold(plan.placeholders);
    if (!placeholders) {
      RunResult failed;
      failed.status = RunStatus::kSetupFailed;
      failed.error = placeholders.error().message;
      return failed;
    }
    plan.placeholders = placeholders->covered();
    auto pipes = exec::CreateCommandPipes();
    EXPECT_TRUE(pipes.has_value());
    auto dev_null = exec::OpenDevNull();
    const exec::StdioFds stdio = exec::MakeStdio(*pipes, dev_null->get());
    // $CORDON_BWRAP_EXEC when set (scripts/run_unprivileged.sh stages it), else the build's.
    const char* staged = std::getenv("CORDON_BWRAP_EXEC");
    const fs::path trampoline = staged != nullptr ? staged : CORDON_BWRAP_EXEC;
    auto launched = LaunchBwrap(plan, stdio, bwrap_, trampoline);
    pipes->CloseWriteEnds();
    RunResult result;
    if (!launched) {
      result.status = RunStatus::kSetupFailed;
      result.error = launched.error().message;
      return result;
    }
    exec::SuperviseOptions options;
    options.timeout = std::chrono::seconds(20);
    options.output_cap = 1 << 20;
    return exec::Supervise(
        std::move(*launched),
        exec::OutputReaders{std::move(pipes->stdout_read), std::move(pipes->stderr_read)}, options);
  }

  RunResult RunShell(const std::string& shell, NetworkPolicy network = NetworkPolicy::kDeny) {
    auto plan = MakePlan(shell, network);
    if (!plan) {
      RunResult r;
      r.status = RunStatus::kSetupFailed;
      r.error = plan.error().message;
      return r;
    }
    return Run(*plan);
  }

  BwrapBinary bwrap_;
  linux_native::KernelFeatures features_;
  fs::path root_;
};

std::string Text(const RunResult& r) {
  return fmt::format("status={} exit={} error={} stdout={} stderr={}", static_cast<int>(r.status),
                     r.exit_code, r.error, r.stdout_data.data, r.stderr_data.data);
}

TEST_F(BwrapSandbox, WriteInTheWorkspaceLandsAndOutsideDoesNot) {
  const fs::path inside = root_ / "ws/inside";
  const fs::path outside = root_ / "outside";
  RunResult r = RunShell(
      fmt::format("echo in > '{}'; echo out > '{}'; exit 0", inside.string(), outside.string()));
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_TRUE(fs::exists(inside)) << Text(r);
  EXPECT_FALSE(fs::exists(outside)) << Text(r);
}

// The workspace swapped for a link to another directory between the plan (which names the
// workspace's identity) and bwrap's start: bwrap binds the descriptor opened then, never the
// link's target, and a directory that is not the planned one is refused.
TEST_F(BwrapSandbox, AWorkspaceSwappedForALinkAfterThePlanIsNotBoundInItsPlace) {
  const fs::path ws = root_ / "ws";
  const fs::path elsewhere = root_ / "elsewhere";
  fs::create_directories(elsewhere);
  const std::optional<plan::Identified> pinned = plan::IdentifyAt(AT_FDCWD, ws.c_str(), false);
  ASSERT_TRUE(pinned.has_value());
  Config config;
  plan::PlanRequest request;
  request.argv = {"/bin/sh", "-c", "echo x > planted"};
  request.workspace = ws;
  request.workspace_id = pinned->id;
  request.cwd = ws;
  request.caller_env = {"PATH=/usr/bin:/bin"};
  request.caller_home = root_ / "home";
  Result<plan::LaunchPlan> plan = plan::Plan(config, features_, request);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  fs::rename(ws, root_ / "ws.moved");
  fs::create_directory_symlink(elsewhere, ws);
  const RunResult linked = Run(*plan);
  EXPECT_EQ(linked.status, RunStatus::kSetupFailed) << Text(linked);
  EXPECT_FALSE(fs::exists(elsewhere / "planted")) << Text(linked);
  // Another directory at the name: refused as well (ESTALE).
  fs::remove(ws);
  fs::create_directory(ws);
  const RunResult replaced = Run(*plan);
  EXPECT_EQ(replaced.status, RunStatus::kSetupFailed) << Text(replaced);
  EXPECT_NE(replaced.error.find("no longer the directory"), std::string::npos) << Text(replaced);
  EXPECT_FALSE(fs::exists(ws / "planted"));
  // Twin: the planned directory back in place is bound, and the write lands there.
  fs::remove(ws);
  fs::rename(root_ / "ws.moved", ws);
  const RunResult back = Run(*plan);
  EXPECT_EQ(back.status, RunStatus::kExited) << Text(back);
  EXPECT_TRUE(fs::exists(ws / "planted")) << Text(back);
}

TEST_F(BwrapSandbox, GitMetadataStaysReadOnly) {
  fs::create_directories(root_ / "ws/.git/hooks");
  RunResult r = RunShell("echo x > .git/hooks/pre-commit; echo ok > file");
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_FALSE(fs::exists(root_ / "ws/.git/hooks/pre-commit"));
  EXPECT_TRUE(fs::exists(root_ / "ws/file"));
}

TEST_F(BwrapSandbox, CredentialsAreHiddenAndTheCanaryDoesNotLeak) {
  RunResult r = RunShell(fmt::format("cat '{}/home/.ssh/id_ed25519'; env", root_.string()));
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_EQ(r.stdout_data.data.find("canary-secret"), std::string::npos) << Text(r);
  EXPECT_EQ(r.stdout_data.data.find("leaked-canary"), std::string::npos) << Text(r);
  EXPECT_NE(r.stdout_data.data.find("PATH="), std::string::npos) << Text(r);  // twin: env works
}

TEST_F(BwrapSandbox, TheTrampolineAppliesSeccompAndNoNewPrivsAndCapabilitiesAreDropped) {
  RunResult r = RunShell("grep -E '^(Seccomp|CapEff|NoNewPrivs):' /proc/self/status");
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_NE(r.stdout_data.data.find("Seccomp:\t2"), std::string::npos) << Text(r);
  EXPECT_NE(r.stdout_data.data.find("NoNewPrivs:\t1"), std::string::npos) << Text(r);
  EXPECT_NE(r.stdout_data.data.find("CapEff:\t0000000000000000"), std::string::npos) << Text(r);
}

TEST_F(BwrapSandbox, TheTrampolineAppliesLandlock) {
  // The workspace is a writable bind; only Landlock can refuse a write there once its rule is
  // gone. The twin (the rule kept) is WriteInTheWorkspaceLandsAndOutsideDoesNot.
  if (features_.landlock_abi < 1) GTEST_SKIP() << "no Landlock on this kernel";
  auto plan = MakePlan("echo x > landlocked", NetworkPolicy::kDeny);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  // The test tree lies below /var/tmp, whose rule would cover it too (rules follow the path
  // across mount points): drop both.
  std::erase(plan->landlock.writable, root_ / "ws");
  std::erase(plan->landlock.writable, fs::path("/var/tmp"));
  RunResult r = Run(*plan);
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_NE(r.exit_code, 0) << Text(r);
  EXPECT_FALSE(fs::exists(root_ / "ws/landlocked"));
}

using test_support::HostListener;

// bash's /dev/tcp: a plain TCP connect with no extra tool (bash is essential on Debian).
std::string ConnectShell(int port) {
  return fmt::format("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{}' 2>/dev/null; exit 0", port);
}

TEST_F(BwrapSandbox, NetworkDenyKeepsHostListenersUnreached) {
  HostListener listener = HostListener::Tcp();
  RunResult r = RunShell(ConnectShell(listener.port()), NetworkPolicy::kDeny);
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_FALSE(listener.Reached());
}

TEST_F(BwrapSandbox, NetworkAllowReachesHostListeners) {
  HostListener listener = HostListener::Tcp();
  RunResult r = RunShell(ConnectShell(listener.port()), NetworkPolicy::kAllow);
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  EXPECT_TRUE(listener.Reached());
}

TEST_F(BwrapSandbox, ADaemonDiesWithTheCommand) {
  const fs::path beat = root_ / "ws/beat";
  RunResult r = RunShell(fmt::format(
      "setsid sh -c 'while :; do date +%N >> {}; sleep 0.05; done' </dev/null >/dev/null 2>&1 & "
      "sleep 0.3; exit 0",
      beat.string()));
  ASSERT_EQ(r.status, RunStatus::kExited) << Text(r);
  ASSERT_TRUE(fs::exists(beat));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto size = fs::file_size(beat);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(fs::file_size(beat), size) << "the daemon kept writing after the command returned";
}

TEST_F(BwrapSandbox, AMissingCommandIsReportedNotRun) {
  auto plan = MakePlan("true", NetworkPolicy::kDeny);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  plan->argv = {"/nonexistent/command"};
  RunResult r = Run(*plan);
  EXPECT_EQ(r.status, RunStatus::kSetupFailed);
  EXPECT_NE(r.error.find("execve"), std::string::npos) << r.error;
}

TEST_F(BwrapSandbox, BubblewrapSetupErrorsAreReportedWithItsMessage) {
  auto plan = MakePlan("true", NetworkPolicy::kDeny);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  // A directory to make beneath a regular file of the host (seen read-only): bwrap refuses
  // before the trampoline runs.
  plan->mounts.push_back({plan::MountOpKind::kDirectory, "/etc/passwd/sub"});
  RunResult r = Run(*plan);
  EXPECT_EQ(r.status, RunStatus::kSetupFailed);
  EXPECT_NE(r.error.find("bubblewrap could not build the sandbox"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("/etc/passwd"), std::string::npos) << r.error;
}

// A required bind whose source is gone is refused before bwrap starts (its source is opened
// first, bind_sources.h), naming the path; nothing runs.
TEST_F(BwrapSandbox, ARequiredBindWhoseSourceIsGoneIsRefusedNamingIt) {
  auto plan = MakePlan("echo ran > ran", NetworkPolicy::kDeny);
  ASSERT_TRUE(plan.has_value()) << plan.error().message;
  plan->mounts.push_back({plan::MountOpKind::kBindReadOnly, root_ / "missing"});
  RunResult r = Run(*plan);
  EXPECT_EQ(r.status, RunStatus::kSetupFailed);
  EXPECT_NE(r.error.find(root_ / "missing"), std::string::npos) << r.error;
  EXPECT_FALSE(fs::exists(root_ / "ws/ran"));
}

}  // namespace
}  // namespace cordon::bwrap
