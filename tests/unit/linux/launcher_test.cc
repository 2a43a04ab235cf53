// Direct tests of linux_native::Launch with a real sandbox: each case starts the probe inside
// it and checks the effect from outside. Every denied case has an allowed twin.
#include "linux/launcher.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

#include "plan/mount_ops.h"
#include "sandbox_runner.h"

namespace cordon::testing {
namespace {

Config WorkspaceWrite() {
  Config config;
  config.sandbox.mode = SandboxMode::kWorkspaceWrite;
  config.sandbox.network = NetworkPolicy::kDeny;
  return config;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NativeLauncher, WriteInsideTheWorkspaceLands) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  auto run = RunInSandbox(WorkspaceWrite(), workspace.path(),
                          {"probe", "write", (workspace.path() / "inside.txt").string()});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->line(), "ok");
  EXPECT_TRUE(WIFEXITED(run->wait_status) && WEXITSTATUS(run->wait_status) == 0);
  EXPECT_EQ(ReadFile(workspace.path() / "inside.txt"), "cordon\n");
}

TEST(NativeLauncher, WriteOutsideTheWorkspaceDoesNotLand) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir base;  // base/ws is the workspace; base itself is its parent
  std::filesystem::create_directory(base.path() / "ws");
  std::filesystem::path workspace = base.path() / "ws";
  TempDir outside_tmp;  // elsewhere in the host's /tmp
  std::vector<std::filesystem::path> targets = {base.path(), outside_tmp.path()};
  // Somewhere outside /tmp too, when this user can write there (the build tree as root).
  std::optional<TempDir> outside_build;
  if (::access(std::filesystem::current_path().c_str(), W_OK) == 0) {
    outside_build.emplace(std::filesystem::current_path());
    targets.push_back(outside_build->path());
  }
  for (const auto& dir : targets) {
    auto target = dir / "escaped.txt";
    auto run = RunInSandbox(WorkspaceWrite(), workspace, {"probe", "write", target});
    ASSERT_TRUE(run) << run.error().message;
    // Below /tmp the write may succeed, into the private /tmp: what matters is the host.
    if (!dir.string().starts_with("/tmp/")) {
      EXPECT_EQ(run->line(), "EROFS") << target;
    }
    EXPECT_FALSE(std::filesystem::exists(target)) << target;
  }
}

TEST(NativeLauncher, ReadOnlyModeRefusesWorkspaceWritesButAllowsPrivateTmp) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  Config config = WorkspaceWrite();
  config.sandbox.mode = SandboxMode::kReadOnly;
  auto denied =
      RunInSandbox(config, workspace.path(), {"probe", "write", (workspace.path() / "x").string()});
  ASSERT_TRUE(denied) << denied.error().message;
  EXPECT_EQ(denied->line(), "EROFS");
  EXPECT_FALSE(std::filesystem::exists(workspace.path() / "x"));
  // The private TMPDIR: /tmp itself, or the scratch inside it when /tmp is the empty
  // read-only view around a workspace below it (plan/mount_ops.h).
  const bool view = workspace.path().string().starts_with("/tmp/");
  auto allowed = RunInSandbox(
      config, workspace.path(),
      {"probe", "write", std::string(view ? plan::kViewScratch : plan::kPrivateTmp) + "/scratch"});
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->line(), "ok");
  if (view) {
    auto beside = RunInSandbox(config, workspace.path(), {"probe", "write", "/tmp/scratch"});
    ASSERT_TRUE(beside) << beside.error().message;
    EXPECT_EQ(beside->line(), "EROFS");
  }
}

TEST(NativeLauncher, CapabilitiesAreEmpty) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  auto run = RunInSandbox(WorkspaceWrite(), workspace.path(), {"probe", "caps"});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->line(),
            "ok CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 "
            "CapBnd=0000000000000000 CapAmb=0000000000000000");
}

TEST(NativeLauncher, CredentialPathsUnderTheHomeAreHiddenButOtherFilesAreNot) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir base;
  // The fake home lies inside the workspace so it is visible at all (the host's /tmp is
  // replaced); read_only mode, because a writable workspace holding the home is refused.
  auto home = base.path() / "home";
  std::filesystem::create_directories(home / ".ssh");
  std::ofstream(home / ".ssh" / "id_ed25519") << "PRIVATE KEY";
  std::ofstream(home / ".netrc") << "machine x password hunter2";
  std::ofstream(home / "notes.txt") << "hello\n";
  Config read_only = WorkspaceWrite();
  read_only.sandbox.mode = SandboxMode::kReadOnly;
  auto read = [&](const std::filesystem::path& path) {
    auto run = RunInSandbox(read_only, base.path(), {"probe", "read", path}, {}, home);
    return run ? run->line() : run.error().message;
  };
  EXPECT_EQ(read(home / ".ssh" / "id_ed25519"), "ENOENT");
  EXPECT_EQ(read(home / ".netrc"), "ok 0");
  EXPECT_EQ(read(home / "notes.txt"), "ok 6");  // twin: the rest of home is untouched
}

// A credential directory configured as a writable root would be masked (neither readable nor
// writable): the run is refused with the reason, and nothing is written there.
TEST(NativeLauncher, ACredentialDirectoryConfiguredAsWritableRootIsRefused) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  TempDir home;
  std::filesystem::create_directories(home.path() / ".ssh");
  std::ofstream(home.path() / ".ssh" / "id_ed25519") << "PRIVATE KEY";
  std::filesystem::create_directories(home.path() / "cache");
  Config config = WorkspaceWrite();
  config.sandbox.writable_roots = {home.path() / ".ssh", home.path() / "cache"};
  auto run = [&](std::vector<std::string> command) {
    auto r = RunInSandbox(config, workspace.path(), std::move(command), {}, home.path());
    return r ? r->line() : r.error().message;
  };
  EXPECT_NE(run({"probe", "write", home.path() / ".ssh" / "authorized_keys"})
                .find("lies in the hidden path"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(home.path() / ".ssh" / "authorized_keys"));
  config.sandbox.writable_roots = {home.path() / "cache"};  // twin
  EXPECT_EQ(run({"probe", "read", home.path() / ".ssh" / "id_ed25519"}), "ENOENT");
  EXPECT_EQ(run({"probe", "write", home.path() / "cache" / "x"}), "ok");
  EXPECT_TRUE(std::filesystem::exists(home.path() / "cache" / "x"));
}

TEST(NativeLauncher, AWorkspaceThatHoldsTheHomeIsRefusedButOneBelowItRuns) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir base;
  auto home = base.path() / "home";
  std::filesystem::create_directories(home / "proj");
  auto refused = RunInSandbox(WorkspaceWrite(), home, {"/bin/true"}, {}, home);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is the home directory"), std::string::npos)
      << refused.error().message;
  auto above = RunInSandbox(WorkspaceWrite(), base.path(), {"/bin/true"}, {}, home);
  ASSERT_FALSE(above);
  EXPECT_NE(above.error().message.find("contains the home directory"), std::string::npos)
      << above.error().message;
  auto below = RunInSandbox(WorkspaceWrite(), home / "proj", {"probe", "write", "f"}, {}, home);
  ASSERT_TRUE(below) << below.error().message;
  EXPECT_EQ(below->line(), "ok");
}

// Plans with a configured hidden file two levels below the workspace, then changes it on the
// host before Launch, as a previous run (or a racing process) could.
class MaskRace : public ::testing::Test {
 protected:
  void SetUp() override {
    secret_ = workspace_.path() / "secrets" / "prod.env";
    std::filesystem::create_directories(secret_.parent_path());
    std::ofstream(secret_) << "TOKEN=1";
    config_ = WorkspaceWrite();
    config_.sandbox.hidden_paths = {secret_};
  }
  Result<plan::LaunchPlan> PlanProbe(std::vector<std::string> command) {
    plan::PlanRequest request;
    request.argv = std::move(command);
    request.workspace = workspace_.path();
    request.caller_home = "/nonexistent";
    return plan::Plan(config_, Features(), request);
  }
  TempDir workspace_;
  TempDir outside_;
  std::filesystem::path secret_;
  Config config_;
};

TEST_F(MaskRace, ASecretIsMaskedAndItsParentCannotBeMovedAwayButASiblingCan) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  std::filesystem::create_directories(workspace_.path() / "other");
  auto plan = PlanProbe({"/bin/sh", "-c",
                         "cat secrets/prod.env; mv secrets moved 2>/dev/null || echo busy; "
                         "mv other other2 && echo moved"});
  ASSERT_TRUE(plan) << plan.error().message;
  auto run = RunPlan(*std::move(plan));
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->stdout_text, "busy\nmoved\n");
  EXPECT_TRUE(std::filesystem::exists(secret_));  // still where the next run masks it
  EXPECT_TRUE(std::filesystem::exists(workspace_.path() / "other2"));
}

TEST_F(MaskRace, ASecretReplacedByASymlinkFailsTheRun) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  auto plan = PlanProbe({"/bin/true"});
  ASSERT_TRUE(plan) << plan.error().message;
  std::ofstream(outside_.path() / "decoy") << "x";
  std::filesystem::remove(secret_);
  std::filesystem::create_symlink(outside_.path() / "decoy", secret_);
  auto run = RunPlan(*std::move(plan));
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().errno_value, ELOOP) << run.error().message;
  EXPECT_NE(run.error().message.find(secret_.string()), std::string::npos);
}

TEST_F(MaskRace, ASecretThatVanishedFailsTheRunAndOneThatChangedTypeToo) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  auto plan = PlanProbe({"/bin/true"});
  ASSERT_TRUE(plan) << plan.error().message;
  std::filesystem::rename(secret_.parent_path(), workspace_.path() / "elsewhere");
  auto vanished = RunPlan(*plan);
  ASSERT_FALSE(vanished);
  EXPECT_EQ(vanished.error().errno_value, ENOENT) << vanished.error().message;
  std::filesystem::create_directories(secret_);  // a directory where a file was planned
  auto changed = RunPlan(*std::move(plan));
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().errno_value, EISDIR) << changed.error().message;
  auto fresh = PlanProbe({"/bin/true"});  // twin: a new plan sees the new layout and runs
  ASSERT_TRUE(fresh) << fresh.error().message;
  auto run = RunPlan(*std::move(fresh));
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_TRUE(WIFEXITED(run->wait_status) && WEXITSTATUS(run->wait_status) == 0);
}

TEST(NativeLauncher, GitMetadataStaysReadOnlyInsideTheWorkspace) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  std::filesystem::create_directories(workspace.path() / ".git" / "hooks");
  auto hook = workspace.path() / ".git" / "hooks" / "pre-commit";
  auto run = RunInSandbox(WorkspaceWrite(), workspace.path(), {"probe", "write", hook});
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->line(), "EROFS");
  EXPECT_FALSE(std::filesystem::exists(hook));
  Config unprotected = WorkspaceWrite();  // twin: with protection off the write lands
  unprotected.sandbox.protect_git_metadata = false;
  auto allowed = RunInSandbox(unprotected, workspace.path(), {"probe", "write", hook});
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->line(), "ok");
}

TEST(NativeLauncher, AGitDirectorySwappedForASymlinkAfterPlanningFailsTheRun) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  TempDir elsewhere;
  std::filesystem::create_directories(workspace.path() / ".git");
  plan::PlanRequest request;
  request.argv = {"/bin/true"};
  request.workspace = workspace.path();
  request.caller_home = "/nonexistent";
  auto planned = plan::Plan(WorkspaceWrite(), Features(), request);
  ASSERT_TRUE(planned) << planned.error().message;
  std::filesystem::remove(workspace.path() / ".git");
  std::filesystem::create_directory_symlink(elsewhere.path(), workspace.path() / ".git");
  auto run = RunPlan(*planned);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().errno_value, ELOOP) << run.error().message;
  // A new plan refuses the linked .git outright; with a directory there again, it runs.
  auto refused = plan::Plan(WorkspaceWrite(), Features(), request);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("symbolic link"), std::string::npos);
  std::filesystem::remove(workspace.path() / ".git");
  std::filesystem::create_directories(workspace.path() / ".git");
  auto fresh = plan::Plan(WorkspaceWrite(), Features(), request);  // twin: a new plan runs
  ASSERT_TRUE(fresh) << fresh.error().message;
  auto ok = RunPlan(*std::move(fresh));
  ASSERT_TRUE(ok) << ok.error().message;
}

TEST(NativeLauncher, AGitFileAndTheGitDirItPointsToStayReadOnly) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  // A submodule-style layout: .git is a file naming the real git dir inside the workspace.
  std::filesystem::create_directories(workspace.path() / "modules/sub");
  std::ofstream(workspace.path() / "modules/sub/HEAD") << "ref: refs/heads/main\n";
  std::ofstream(workspace.path() / ".git") << "gitdir: modules/sub\n";
  auto write = [&](const std::filesystem::path& path) {
    auto run = RunInSandbox(WorkspaceWrite(), workspace.path(), {"probe", "write", path});
    return run ? run->line() : run.error().message;
  };
  EXPECT_EQ(write(workspace.path() / "modules/sub/config"), "EROFS");
  EXPECT_EQ(write(workspace.path() / ".git"), "EROFS");
  EXPECT_EQ(ReadFile(workspace.path() / ".git"), "gitdir: modules/sub\n");
  EXPECT_EQ(write(workspace.path() / "modules/other"), "ok");  // twin: the rest is writable
}

// Plans for `workspace`, then removes it before Launch: the bind of the workspace fails in the
// child, and the error must name the step, the call and the path, with nothing left running.
TEST(NativeLauncher, AFailingMountStepIsReportedWithItsCallAndPath) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir base;
  std::filesystem::path workspace = base.path() / "ws";
  std::filesystem::create_directory(workspace);
  plan::PlanRequest request;
  request.argv = {"/bin/true"};
  request.workspace = workspace;
  auto launch_plan = plan::Plan(WorkspaceWrite(), Features(), request);
  ASSERT_TRUE(launch_plan) << launch_plan.error().message;
  std::filesystem::remove(workspace);
  auto launched = linux_native::Launch(*launch_plan, {-1, -1, -1});
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().code, ErrorCode::kSystem);
  EXPECT_EQ(launched.error().errno_value, ENOENT);
  EXPECT_EQ(launched.error().message, "native sandbox: step bind_writable: mount(" +
                                          workspace.string() +
                                          ", MS_BIND|MS_REC): No such file or directory");
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "a sandbox process was left behind";
}

TEST(NativeLauncher, AMissingProgramIsASetupErrorNamingExecve) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  auto run = RunInSandbox(WorkspaceWrite(), workspace.path(), {"/nonexistent/program"});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ErrorCode::kCommandNotFound);
  EXPECT_NE(run.error().message.find("step execve"), std::string::npos) << run.error().message;
}

}  // namespace
}  // namespace cordon::testing
