#include "worktree/git_commit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "repo_fixture.h"
#include "worktree/git_runner.h"

namespace cordon::worktree {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::RepoFixture;
namespace fs = std::filesystem;

class CommitAllTest : public RepoFixture {
 protected:
  LinkedWorktree Detected() {
    auto found = DetectLinkedWorktree(linked_);
    EXPECT_TRUE(found) << found.error().message;
    return found.value_or(LinkedWorktree{});
  }
};

TEST_F(CommitAllTest, CommitsNewAndChangedFilesAndReturnsTheIdOnTheWorktreeBranch) {
  Write(linked_ / "new.txt", "new\n");
  Write(linked_ / "README", "changed\n");
  auto outcome = CommitAll(Detected(), "Add new.txt");
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_EQ(outcome->status, CommitStatus::kCommitted);
  EXPECT_EQ(outcome->commit.size(), 40u);
  EXPECT_THAT(outcome->summary, HasSubstr("Add new.txt"));
  // The main repository sees the commit on the worktree's branch.
  EXPECT_EQ(GitOut(main_, "rev-parse feature"), outcome->commit);
  EXPECT_EQ(GitOut(main_, "log -1 --format=%s feature"), "Add new.txt");
  EXPECT_EQ(GitOut(linked_, "status --porcelain"), "");
}

TEST_F(CommitAllTest, CommitsADeletion) {
  fs::remove(linked_ / "README");
  auto outcome = CommitAll(Detected(), "Remove README");
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_EQ(outcome->status, CommitStatus::kCommitted);
  EXPECT_EQ(GitOut(main_, "ls-tree --name-only feature"), "");
}

TEST_F(CommitAllTest, RefusesNothingToCommitWithoutMakingACommit) {
  const std::string before = GitOut(main_, "rev-parse feature");
  auto outcome = CommitAll(Detected(), "Nothing here");
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, CommitStatus::kNothingToCommit);
  EXPECT_EQ(GitOut(main_, "rev-parse feature"), before);
}

TEST_F(CommitAllTest, RefusesAnEmptyOrBlankMessageWithoutStaging) {
  Write(linked_ / "new.txt", "new\n");
  for (const char* message : {"", "   \n\t "}) {
    auto outcome = CommitAll(Detected(), message);
    ASSERT_TRUE(outcome) << outcome.error().message;
    EXPECT_EQ(outcome->status, CommitStatus::kEmptyMessage);
  }
  EXPECT_EQ(GitOut(linked_, "status --porcelain"), "?? new.txt");
}

TEST_F(CommitAllTest, RefusesAMessageWithANulByte) {
  Write(linked_ / "new.txt", "new\n");
  auto outcome = CommitAll(Detected(), std::string_view("a\0b", 3));
  ASSERT_FALSE(outcome);
  EXPECT_THAT(outcome.error().message, HasSubstr("NUL"));
}

TEST_F(CommitAllTest, PassesAMessageStartingWithADashAsTheMessage) {
  Write(linked_ / "new.txt", "new\n");
  auto outcome = CommitAll(Detected(), "--amend");
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_EQ(outcome->status, CommitStatus::kCommitted);
  EXPECT_EQ(GitOut(main_, "log -1 --format=%s feature"), "--amend");
  EXPECT_EQ(GitOut(main_, "rev-list --count feature"), "2");
}

TEST_F(CommitAllTest, RunsNoRepositoryHook) {
  // Hooks of a linked worktree live in the common dir's hooks/.
  const fs::path hooks = main_ / ".git" / "hooks";
  fs::create_directories(hooks);
  const fs::path marker = base_ / "hook-ran";
  for (const char* hook : {"pre-commit", "commit-msg", "post-commit", "prepare-commit-msg"}) {
    Write(hooks / hook, "#!/bin/sh\ntouch '" + marker.string() + "'\n");
    ::chmod((hooks / hook).c_str(), 0755);
  }
  Write(linked_ / "new.txt", "new\n");
  auto outcome = CommitAll(Detected(), "Hooks must not run");
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_EQ(outcome->status, CommitStatus::kCommitted);
  EXPECT_FALSE(fs::exists(marker));
}

// A nested repository's config is writable from the sandbox and can name a clean filter that
// `git status`/`git add` inside it would run on the host.
void PlantNestedRepository(const fs::path& dir, const fs::path& marker) {
  fs::create_directories(dir);
  RepoFixture::Git(dir, "init -q");
  RepoFixture::Git(dir, "config filter.evil.clean \"sh -c 'touch " + marker.string() + "; cat'\"");
  RepoFixture::Write(dir / ".gitattributes", "* filter=evil\n");
  RepoFixture::Write(dir / "a", "a\n");
}

TEST_F(CommitAllTest, RefusesAnUntrackedNestedRepositoryAndRunsNothingInside) {
  const fs::path marker = base_ / "filter-ran";
  PlantNestedRepository(linked_ / "sub" / "nested", marker);
  auto outcome = CommitAll(Detected(), "Commit the nested repository");
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, CommitStatus::kNestedRepository);
  EXPECT_EQ(outcome->detail, "sub/nested/");
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(GitOut(main_, "rev-list --count feature"), "1");
}

TEST_F(CommitAllTest, RefusesANestedRepositoryWhoseNameGitWouldQuote) {
  // Without -z git prints "?? \"odd \\"name\"/\"": the trailing slash hides behind the quote.
  const fs::path marker = base_ / "filter-ran";
  PlantNestedRepository(linked_ / "odd \"name\"\tx", marker);
  auto outcome = CommitAll(Detected(), "Commit the quoted nested repository");
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, CommitStatus::kNestedRepository);
  EXPECT_EQ(outcome->detail, "odd \"name\"\tx/");
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(CommitAllTest, CommitsAFileWhoseNameGitWouldQuoteAndARename) {
  Write(linked_ / "odd \"name\"\tx", "odd\n");
  auto outcome = CommitAll(Detected(), "Commit an odd name");
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, CommitStatus::kCommitted);
  Write(linked_ / "plain", "plain\n");
  ASSERT_EQ(CommitAll(Detected(), "Add plain")->status, CommitStatus::kCommitted);
  Git(linked_, "mv plain 'renamed file'");  // status lists "R  renamed file\0plain\0"
  auto renamed = CommitAll(Detected(), "Rename it");
  ASSERT_TRUE(renamed) << renamed.error().message;
  EXPECT_EQ(renamed->status, CommitStatus::kCommitted);
}

TEST_F(CommitAllTest, RefusesAWorktreeWithASubmoduleAndRunsNothingInside) {
  const fs::path marker = base_ / "filter-ran";
  PlantNestedRepository(linked_ / "nested", marker);
  Git(linked_ / "nested", "-c filter.evil.clean=cat add a");
  Git(linked_ / "nested",
      "-c filter.evil.clean=cat -c user.name=t -c user.email=t@e commit -q -m n");
  Git(linked_, "add nested");  // a gitlink, as an earlier commit could have made
  fs::remove(marker);
  Write(linked_ / "nested" / "a", "changed\n");
  Write(linked_ / "other", "other\n");
  auto outcome = CommitAll(Detected(), "Commit around the submodule");
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, CommitStatus::kNestedRepository);
  EXPECT_EQ(outcome->detail, "nested");
  EXPECT_FALSE(fs::exists(marker));
}

TEST_F(CommitAllTest, ReportsGitsOwnErrorWhenAStepFails) {
  Write(linked_ / "new.txt", "new\n");
  LinkedWorktree broken = Detected();
  fs::create_directories(base_ / "plain");
  broken.root = base_ / "plain";  // not a repository: git status fails
  auto outcome = CommitAll(broken, "Will fail");
  ASSERT_FALSE(outcome);
  EXPECT_THAT(outcome.error().message, HasSubstr("git status failed"));
  EXPECT_THAT(outcome.error().message, HasSubstr("not a git repository"));
}

TEST(GitEnvironment, KeepsIdentityAndPathButDropsOtherGitVariables) {
  const auto env =
      GitEnvironment({"PATH=/opt/bin", "HOME=/home/u", "GIT_DIR=/elsewhere", "GIT_CONFIG_COUNT=1",
                      "GIT_AUTHOR_NAME=A", "SECRET=x", "GIT_COMMITTER_EMAIL=c@e"});
  EXPECT_THAT(env, Contains("PATH=/opt/bin"));
  EXPECT_THAT(env, Contains("HOME=/home/u"));
  EXPECT_THAT(env, Contains("GIT_AUTHOR_NAME=A"));
  EXPECT_THAT(env, Contains("GIT_COMMITTER_EMAIL=c@e"));
  EXPECT_THAT(env, Not(Contains("GIT_DIR=/elsewhere")));
  EXPECT_THAT(env, Not(Contains("GIT_CONFIG_COUNT=1")));
  EXPECT_THAT(env, Not(Contains("SECRET=x")));
}

TEST(GitEnvironment, SuppliesAPathWhenTheCallerHasNone) {
  const auto env = GitEnvironment({"HOME=/home/u"});
  EXPECT_THAT(env, Contains(HasSubstr("PATH=/usr")));
}

TEST(GitArgv, DisablesHooksAndFsmonitorBeforeTheSubcommand) {
  const auto argv = GitArgv("/w", {"add", "-A"});
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "git");
  EXPECT_THAT(argv, Contains("core.hooksPath=/dev/null"));
  EXPECT_THAT(argv, Contains("core.fsmonitor=false"));
  EXPECT_EQ(argv[argv.size() - 2], "add");
  EXPECT_EQ(argv.back(), "-A");
}

}  // namespace
}  // namespace cordon::worktree

namespace cordon::worktree {
namespace {

class CommitRootTest : public testing::RepoFixture {};

// Every session whose .git the sandbox keeps read-only commits its workspace from the host
// (decision 0042): the main working tree's top qualifies as the linked worktree does.
TEST_F(CommitRootTest, TheTopOfAWorkingTreeWhoseGitTheSandboxKeepsReadOnly) {
  SandboxConfig config;  // workspace_write, protect_git_metadata on
  EXPECT_EQ(CommitRoot(config, main_), main_);
  EXPECT_EQ(CommitRoot(config, linked_), linked_);  // a .git file
  Write(main_ / "new.txt", "new\n");
  auto outcome = CommitAll(main_, "Add new.txt in the main working tree");
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, CommitStatus::kCommitted);
  EXPECT_EQ(GitOut(main_, "log -1 --format=%s"), "Add new.txt in the main working tree");
}

// The twins: no commit root where the sandbox does not keep .git read-only, below the top, or
// where .git is a placeholder (empty) or a link.
TEST_F(CommitRootTest, NoneWithoutTheProtectionOrOutsideTheTop) {
  SandboxConfig config;
  config.mode = SandboxMode::kReadOnly;
  EXPECT_EQ(CommitRoot(config, main_), std::nullopt);
  config = SandboxConfig{};
  config.protect_git_metadata = false;
  EXPECT_EQ(CommitRoot(config, main_), std::nullopt);
  config = SandboxConfig{};
  std::filesystem::create_directories(main_ / "sub");
  EXPECT_EQ(CommitRoot(config, main_ / "sub"), std::nullopt);
  std::filesystem::create_directories(main_ / "placeholder/.git");
  EXPECT_EQ(CommitRoot(config, main_ / "placeholder"), std::nullopt);
  std::filesystem::create_directories(main_ / "linked-git");
  std::filesystem::create_directory_symlink(main_ / ".git", main_ / "linked-git/.git");
  EXPECT_EQ(CommitRoot(config, main_ / "linked-git"), std::nullopt);
}

}  // namespace
}  // namespace cordon::worktree
