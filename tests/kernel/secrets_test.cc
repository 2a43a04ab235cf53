// Secrets, root-only files and set-id bits, checked from outside (the host's files after the
// run, the probe's report of what it read). Every denial has an allowed twin.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using SecretsTest = ProbeTest;

// The test home lies under the host's /tmp, which the sandbox replaces: a configured writable
// root below it (as a user might grant ~/.config) brings the credential directory inside it
// into view, where the mask must hide it while the rest of the root stays usable.
TEST_F(SecretsTest, CredentialsInsideAWritableRootUnderHomeAreHiddenButTheRestIsNot) {
  std::filesystem::create_directories(home_ / ".config" / "gh");
  std::filesystem::create_directories(home_ / ".config" / "tool");
  // cordon's own config dir must exist before ~/.config may be writable (else refused).
  std::filesystem::create_directories(home_ / ".config" / "cordon");
  std::ofstream(home_ / ".config" / "gh" / "hosts.yml") << "oauth_token: canary-gh-token";
  std::ofstream(home_ / ".config" / "tool" / "settings") << "theme=dark";
  Config config = MakeConfig();
  config.sandbox.writable_roots = {home_ / ".config"};
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult secret = Probe(*session, "read " + (home_ / ".config/gh/hosts.yml").string());
  EXPECT_EQ(secret.stdout_data.data, "ENOENT\n") << Describe(secret);
  const RunResult listing = Shell(*session, "ls -A '" + (home_ / ".config/gh").string() + "'");
  EXPECT_EQ(listing.stdout_data.data, "") << Describe(listing);
  const RunResult other = Probe(*session, "read " + (home_ / ".config/tool/settings").string());
  EXPECT_EQ(other.stdout_data.data, "ok 10\n") << Describe(other);
  const RunResult write = Probe(*session, "write " + (home_ / ".config/tool/new").string());
  EXPECT_EQ(write.stdout_data.data, "ok\n") << Describe(write);
  EXPECT_TRUE(Exists(home_ / ".config/tool/new"));
  EXPECT_EQ(ReadFile(home_ / ".config/gh/hosts.yml"), "oauth_token: canary-gh-token");
}

TEST_F(SecretsTest, AWorkspaceThatIsTheHomeIsRefusedWith125AndOneBelowItRuns) {
  Result<Session> at_home = Session::Create(MakeConfig(), home_);
  ASSERT_TRUE(at_home) << at_home.error().message;
  CommandRequest request;
  request.argv = {"true"};
  const RunResult refused = at_home->Run(request);
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed) << Describe(refused);
  EXPECT_EQ(refused.CliExitCode(), 125);
  EXPECT_NE(refused.error.find("home directory"), std::string::npos) << refused.error;

  std::filesystem::create_directory(home_ / "proj");
  Result<Session> below = Session::Create(MakeConfig(), home_ / "proj");
  ASSERT_TRUE(below) << below.error().message;
  request.argv = {"sh", "-c", "echo x > made"};
  const RunResult ran = below->Run(request);
  EXPECT_EQ(ran.status, RunStatus::kExited) << Describe(ran);
  EXPECT_TRUE(Exists(home_ / "proj" / "made"));
}

// As root the sandbox still runs as host uid 0 (without capabilities): the owner of
// /etc/shadow. The file is masked; /etc/passwd (world-readable) is the twin. As another user
// both hold trivially, which the test accepts.
TEST_F(SecretsTest, ShadowIsUnreadableInsideWhilePasswdIsReadable) {
  if (::access("/etc/shadow", F_OK) != 0) GTEST_SKIP() << "no /etc/shadow here";
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult shadow = Shell(*session, "cat /etc/shadow | wc -c");
  EXPECT_EQ(shadow.stdout_data.data, "0\n") << Describe(shadow);
  const RunResult passwd = Shell(*session, "grep -c '^root:' /etc/passwd");
  EXPECT_EQ(passwd.stdout_data.data, "1\n") << Describe(passwd);
}

TEST_F(SecretsTest, ASetIdBitCannotBeSetOnAWorkspaceFileButAnExecuteBitCan) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path file = workspace_ / "tool";
  std::ofstream(file) << "#!/bin/sh\n";
  const RunResult setuid = Probe(*session, "chmod 4755 " + file.string());
  EXPECT_EQ(setuid.stdout_data.data, "EPERM\n") << Describe(setuid);
  const RunResult setgid = Probe(*session, "chmod 2755 " + file.string());
  EXPECT_EQ(setgid.stdout_data.data, "EPERM\n") << Describe(setgid);
  const RunResult shell = Shell(*session, "chmod u+s tool 2>/dev/null || echo refused");
  EXPECT_EQ(shell.stdout_data.data, "refused\n") << Describe(shell);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u);
  const RunResult exec = Probe(*session, "chmod 755 " + file.string());
  EXPECT_EQ(exec.stdout_data.data, "ok\n") << Describe(exec);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

}  // namespace
}  // namespace cordon::kernel_test
