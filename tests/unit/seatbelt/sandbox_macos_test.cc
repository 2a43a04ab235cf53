// The real Seatbelt sandbox, checked from outside: macOS only (registered only on APPLE).
// Not yet run on a Mac (README says so).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "seatbelt/probe.h"
#include "seatbelt/profile.h"

namespace cordon::seatbelt {
namespace {

namespace fs = std::filesystem;

int Run(const std::vector<std::string>& argv) {
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
    return Run(SandboxExecArgv(RenderSeatbelt(policy_), {"/bin/sh", "-c", shell}));
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
  EXPECT_EQ(Run({"/bin/cat", (root_ / "home/.ssh/id").string()}), 0);  // twin: readable bare
}

TEST_F(SeatbeltSandbox, NetworkIsDeniedUnlessAllowed) {
  EXPECT_NE(Sandboxed("/usr/bin/nc -z -G 2 1.1.1.1 53"), 0);
  policy_.network_allowed = true;
  EXPECT_EQ(Sandboxed("/usr/bin/nc -z -G 2 1.1.1.1 53"), 0);
}

}  // namespace
}  // namespace cordon::seatbelt
