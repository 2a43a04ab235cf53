// The real Seatbelt sandbox, checked from outside: macOS only (registered only on APPLE).
// Not yet run on a Mac (README says so).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "exec/command_pipes.h"
#include "exec/supervisor.h"
#include "seatbelt/launch.h"
#include "seatbelt/probe.h"
#include "seatbelt/profile.h"

extern char** environ;  // macOS's <unistd.h> does not declare it

namespace cordon::seatbelt {
namespace {

namespace fs = std::filesystem;

int RunBare(const std::vector<std::string>& argv) {
  std::vector<char*> words;
  for (const auto& w : argv) words.push_back(const_cast<char*>(w.c_str()));
  words.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawn(&pid, words[0], nullptr, nullptr, words.data(), environ) != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class SeatbeltSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::canonical(fs::temp_directory_path()) / ("cordon-sb-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "ws");
    fs::create_directories(root_ / "home/.ssh");
    std::ofstream(root_ / "home/.ssh/id") << "secret";
    ASSERT_TRUE(ProbeSeatbelt(root_ / "probe").has_value());
    policy_.writable = {root_ / "ws"};
    policy_.hidden_dirs = {root_ / "home/.ssh"};
  }
  void TearDown() override { fs::remove_all(root_); }
  int Sandboxed(const std::string& shell) {
    return RunBare(SandboxExecArgv(RenderSeatbelt(policy_), {"/bin/sh", "-c", shell}));
  }
  fs::path root_;
  SeatbeltPolicy policy_;
};

TEST_F(SeatbeltSandbox, WriteInTheWorkspaceLands) {
  EXPECT_EQ(Sandboxed("echo x > '" + (root_ / "ws/in").string() + "'"), 0);
  EXPECT_TRUE(fs::exists(root_ / "ws/in"));
}

TEST_F(SeatbeltSandbox, WriteOutsideTheWorkspaceDoesNot) {
  EXPECT_NE(Sandboxed("echo x > '" + (root_ / "out").string() + "'"), 0);
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

TEST_F(SeatbeltSandbox, CredentialsAreUnreadable) {
  EXPECT_NE(Sandboxed("cat '" + (root_ / "home/.ssh/id").string() + "'"), 0);
  EXPECT_EQ(RunBare({"/bin/cat", (root_ / "home/.ssh/id").string()}), 0);  // twin: readable bare
}

TEST_F(SeatbeltSandbox, NetworkIsDeniedUnlessAllowed) {
  EXPECT_NE(Sandboxed("/usr/bin/nc -z -G 2 1.1.1.1 53"), 0);
  policy_.network_allowed = true;
  EXPECT_EQ(Sandboxed("/usr/bin/nc -z -G 2 1.1.1.1 53"), 0);
}

// The whole backend: seatbelt::Launch + the supervisor, as a session runs a command.
class SeatbeltBackend : public SeatbeltSandbox {
 protected:
  void SetUp() override {
    SeatbeltSandbox::SetUp();
    plan_.sandboxed = true;
    plan_.env = {"PATH=/usr/bin:/bin", "HOME=/tmp/.cordon-home", "TMPDIR=/tmp"};
    plan_.workspace = root_ / "ws";
    plan_.cwd = root_ / "ws";
    plan_.mounts = {{plan::MountOpKind::kBindWritable, root_ / "ws"},
                    {plan::MountOpKind::kMaskDirectory, root_ / "home/.ssh"}};
    plan_.enforcement.network = true;
    plan_.seccomp.sockets = plan::SocketPolicy::kUnixAndNetlink;
  }
  RunResult Launched(const std::string& shell) {
    plan_.argv = {"/bin/sh", "-c", shell};
    Result<exec::CommandPipes> pipes = exec::CreateCommandPipes();
    Result<core::UniqueFd> dev_null = exec::OpenDevNull();
    EXPECT_TRUE(pipes && dev_null);
    Result<exec::LaunchedProcess> launched =
        Launch(plan_, exec::MakeStdio(*pipes, dev_null->get()));
    pipes->CloseWriteEnds();
    EXPECT_TRUE(launched.has_value()) << launched.error().message;
    if (!launched) return {};
    exec::SuperviseOptions options;
    options.timeout = std::chrono::seconds(20);
    return exec::Supervise(
        std::move(*launched),
        exec::OutputReaders{std::move(pipes->stdout_read), std::move(pipes->stderr_read)}, options);
  }
  plan::LaunchPlan plan_;
};

TEST_F(SeatbeltBackend, AWriteInTheWorkspaceLandsAndOneOutsideDoesNot) {
  EXPECT_EQ(Launched("echo x > in").exit_code, 0);
  EXPECT_TRUE(fs::exists(root_ / "ws/in"));
  EXPECT_NE(Launched("echo x > '" + (root_ / "out").string() + "'").exit_code, 0);
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

TEST_F(SeatbeltBackend, HomeAndTmpdirArePrivateWritableAndGoneAfterTheRun) {
  RunResult result = Launched("echo x > \"$HOME/f\" && echo y > \"$TMPDIR/g\" && echo \"$HOME\"");
  ASSERT_EQ(result.exit_code, 0) << result.stderr_data.data;
  const fs::path home = result.stdout_data.data.substr(0, result.stdout_data.data.size() - 1);
  EXPECT_EQ(home.filename(), "home");
  EXPECT_FALSE(fs::exists(home.parent_path()));
  // Twin: the real /tmp is not writable to the command.
  EXPECT_NE(Launched("echo x > /tmp/cordon-sb-escape-$$").exit_code, 0);
}

TEST_F(SeatbeltBackend, CredentialsAreUnreadableThroughTheLauncher) {
  EXPECT_NE(Launched("cat '" + (root_ / "home/.ssh/id").string() + "'").exit_code, 0);
  EXPECT_EQ(Launched("cat /etc/hosts > /dev/null").exit_code, 0);  // twin: the host is readable
}

TEST_F(SeatbeltBackend, NetworkIsDeniedThroughTheLauncherUnlessThePlanAllowsIt) {
  EXPECT_NE(Launched("/usr/bin/nc -z -G 2 1.1.1.1 53").exit_code, 0);
  plan_.enforcement.network = false;
  plan_.seccomp.sockets = plan::SocketPolicy::kAny;
  EXPECT_EQ(Launched("/usr/bin/nc -z -G 2 1.1.1.1 53").exit_code, 0);
}

}  // namespace
}  // namespace cordon::seatbelt
