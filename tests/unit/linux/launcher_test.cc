// Direct tests of linux_native::Launch with a real sandbox: each case starts the probe inside
// it and checks the effect from outside. Every denied case has an allowed twin.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
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
  TempDir workspace;
  TempDir outside_tmp;                              // under the host's /tmp
  TempDir outside_build(std::filesystem::current_path());  // elsewhere on the host
  for (const auto& dir : {outside_tmp.path(), outside_build.path()}) {
    auto target = dir / "escaped.txt";
    auto run = RunInSandbox(WorkspaceWrite(), workspace.path(), {"probe", "write", target});
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_NE(run->line(), "ok") << target;
    EXPECT_FALSE(std::filesystem::exists(target)) << target;
  }
}

TEST(NativeLauncher, ReadOnlyModeRefusesWorkspaceWritesButAllowsPrivateTmp) {
  CORDON_REQUIRE_NATIVE_SANDBOX();
  TempDir workspace;
  Config config = WorkspaceWrite();
  config.sandbox.mode = SandboxMode::kReadOnly;
  auto denied = RunInSandbox(config, workspace.path(),
                             {"probe", "write", (workspace.path() / "x").string()});
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
