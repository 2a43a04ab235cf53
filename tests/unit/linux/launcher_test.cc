// Direct tests of linux_native::Launch with a real sandbox: each case starts the probe inside
// it and checks the effect from outside. Every denied case has an allowed twin.
#include "linux/launcher.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <sstream>

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
  auto allowed = RunInSandbox(config, workspace.path(), {"probe", "write", "/tmp/scratch"});
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_EQ(allowed->line(), "ok");
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
  TempDir workspace;
  // The fake home lies inside the (bound) workspace so it is visible at all; the masks go on
  // top of the writable bind.
  auto home = workspace.path() / "home";
  std::filesystem::create_directories(home / ".ssh");
  std::ofstream(home / ".ssh" / "id_ed25519") << "PRIVATE KEY";
  std::ofstream(home / ".netrc") << "machine x password hunter2";
  std::ofstream(home / "notes.txt") << "hello\n";
  auto read = [&](const std::filesystem::path& path) {
    auto run = RunInSandbox(WorkspaceWrite(), workspace.path(), {"probe", "read", path}, {}, home);
    return run ? run->line() : run.error().message;
  };
  EXPECT_EQ(read(home / ".ssh" / "id_ed25519"), "ENOENT");
  EXPECT_EQ(read(home / ".netrc"), "ok 0");
  EXPECT_EQ(read(home / "notes.txt"), "ok 6");  // twin: the rest of home is untouched
  auto write = RunInSandbox(WorkspaceWrite(), workspace.path(),
                            {"probe", "write", home / ".ssh" / "authorized_keys"}, {}, home);
  ASSERT_TRUE(write) << write.error().message;
  EXPECT_EQ(write->line(), "EROFS");
  EXPECT_FALSE(std::filesystem::exists(home / ".ssh" / "authorized_keys"));
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

TEST(NativeLauncher, AGitFileAndTheGitDirItPointsToStayReadOnly) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  // A submodule-style layout: .git is a file naming the real git dir inside the workspace.
  std::filesystem::create_directories(workspace.path() / "modules/sub");
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
  EXPECT_EQ(run.error().code, ErrorCode::kNotFound);
  EXPECT_NE(run.error().message.find("step execve"), std::string::npos) << run.error().message;
}

}  // namespace
}  // namespace cordon::testing
