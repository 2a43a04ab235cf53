// `cordon git commit`: what sandboxed commands wrote (their .git read-only) committed from the
// host without the repository's hooks; refusals with their exit codes. The real binary, as a
// user or a harness runs it.
#include <sys/stat.h>

#include <cstdlib>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

class GitCommand : public CliTest {
 protected:
  // Runs git on the host in the workspace (the test's own setup, not under test).
  void Git(const std::string& args) {
    const std::string command = "git -C '" + workspace_.string() + "' " + args + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  void MakeRepository() {
    Git("init -q -b main");
    Git("config user.name 'Cordon E2E'");
    Git("config user.email e2e@cordon.invalid");
    WriteFile(workspace_ / "README", "hello\n");
    Git("add README");
    Git("commit -q -m initial");
  }
};

TEST_F(GitCommand, CommitsWhatASandboxedCommandWroteWithoutTheRepositoryHooks) {
  MakeRepository();
  const std::filesystem::path marker = home_ / "hook-ran";
  WriteFile(workspace_ / ".git/hooks/pre-commit", "#!/bin/sh\ntouch '" + marker.string() + "'\n");
  ::chmod((workspace_ / ".git/hooks/pre-commit").c_str(), 0755);
  // Inside the sandbox git cannot write .git: the twin that makes the host-side commit needed.
  Outcome inside = Cordon({"run", "-c", "echo made > made.txt && git add made.txt"});
  EXPECT_NE(inside.exit_code, 0) << inside.out;
  ASSERT_EQ(ReadFile(workspace_ / "made.txt"), "made\n");
  Outcome commit = Cordon({"git", "commit", "-m", "Add made.txt"});
  ASSERT_EQ(commit.exit_code, 0) << commit.err;
  EXPECT_NE(commit.out.find("Committed "), std::string::npos) << commit.out;
  EXPECT_NE(commit.out.find("Add made.txt"), std::string::npos) << commit.out;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the repository hook ran";
  Outcome again = Cordon({"git", "commit", "-m", "again"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("nothing to commit"), std::string::npos) << again.err;
}

TEST_F(GitCommand, OutsideARepositoryOrWithoutAMessageNothingRuns) {
  Outcome plain = Cordon({"git", "commit", "-m", "x"});
  EXPECT_EQ(plain.exit_code, 125);
  EXPECT_NE(plain.err.find("not the top of a git working tree"), std::string::npos) << plain.err;
  MakeRepository();
  WriteFile(workspace_ / "new.txt", "new\n");
  Outcome blank = Cordon({"git", "commit", "-m", "   "});
  EXPECT_EQ(blank.exit_code, 125);
  EXPECT_NE(blank.err.find("message is empty"), std::string::npos) << blank.err;
  EXPECT_EQ(Cordon({"git", "commit"}).exit_code, 125);  // -m is required
}

}  // namespace
}  // namespace cordon::e2e
