#include "worktree/detect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "repo_fixture.h"

namespace cordon::worktree {
namespace {

using ::testing::HasSubstr;
using testing::RepoFixture;
namespace fs = std::filesystem;

using DetectLinkedWorktreeTest = RepoFixture;

TEST_F(DetectLinkedWorktreeTest, AcceptsALinkedWorktreeAndNamesItsGitDirs) {
  auto found = DetectLinkedWorktree(linked_);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->root, linked_);
  EXPECT_EQ(found->git_file, linked_ / ".git");
  EXPECT_EQ(found->common_dir, main_ / ".git");
  EXPECT_EQ(found->git_dir, main_ / ".git" / "worktrees" / "linked");
}

TEST_F(DetectLinkedWorktreeTest, FindsTheWorktreeFromASubdirectory) {
  fs::create_directories(linked_ / "src" / "deep");
  auto found = DetectLinkedWorktree(linked_ / "src" / "deep");
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->root, linked_);
}

TEST_F(DetectLinkedWorktreeTest, RefusesTheMainWorkingTreeAndSaysHowToMakeAWorktree) {
  auto found = DetectLinkedWorktree(main_);
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("a main working tree, not a linked worktree"));
  EXPECT_THAT(found.error().message, HasSubstr("worktree add <path>"));
}

TEST_F(DetectLinkedWorktreeTest, RefusesADirectoryOutsideAnyRepository) {
  fs::create_directories(base_ / "plain");
  auto found = DetectLinkedWorktree(base_ / "plain");
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("not a git repository"));
}

TEST_F(DetectLinkedWorktreeTest, AnEmptyGitDirectoryIsNotARepositoryLikeForGit) {
  // cordon's placeholder for a missing .git (plan/host_placeholders.h) must not turn a plain
  // directory into "a main working tree".
  fs::create_directories(base_ / "plain" / ".git");
  auto found = DetectLinkedWorktree(base_ / "plain");
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("not a git repository"));
}

TEST_F(DetectLinkedWorktreeTest, RefusesAGitFilePointingOutsideAWorktreesDirectory) {
  // A forged .git naming the main git dir itself, as a separate-git-dir checkout would.
  Write(linked_ / ".git", "gitdir: " + (main_ / ".git").string() + "\n");
  auto found = DetectLinkedWorktree(linked_);
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("'worktrees' directory"));
}

TEST_F(DetectLinkedWorktreeTest, RefusesAGitDirWhoseBackPointerNamesAnotherWorktree) {
  // A second worktree's .git claims the first one's git dir.
  fs::create_directories(base_ / "impostor");
  Write(base_ / "impostor" / ".git",
        "gitdir: " + (main_ / ".git" / "worktrees" / "linked").string() + "\n");
  auto found = DetectLinkedWorktree(base_ / "impostor");
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("not this worktree's"));
}

TEST_F(DetectLinkedWorktreeTest, RefusesACommondirThatLeadsElsewhere) {
  fs::create_directories(base_ / "other");
  Git(base_ / "other", "init -q");
  Write(main_ / ".git" / "worktrees" / "linked" / "commondir", (base_ / "other" / ".git").string());
  auto found = DetectLinkedWorktree(linked_);
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("commondir leads to"));
}

TEST_F(DetectLinkedWorktreeTest, RefusesAGitFileThatIsASymlink) {
  fs::remove(linked_ / ".git");
  fs::create_symlink(main_ / ".git", linked_ / ".git");
  auto found = DetectLinkedWorktree(linked_);
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("neither a file nor a directory"));
}

TEST_F(DetectLinkedWorktreeTest, RefusesAGitFileWithoutTheGitdirPrefix) {
  Write(linked_ / ".git", "something else\n");
  auto found = DetectLinkedWorktree(linked_);
  ASSERT_FALSE(found);
  EXPECT_THAT(found.error().message, HasSubstr("gitdir: "));
}

TEST_F(DetectLinkedWorktreeTest, RefusesAMissingWorkspace) {
  auto found = DetectLinkedWorktree(base_ / "missing");
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace cordon::worktree
