#include "plan/git_placeholder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

class GitPlaceholderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-gitph-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(GitPlaceholderTest, CreatesAnEmptyGitDirectoryForTheRunAndRemovesItAfter) {
  {
    auto held = GitPlaceholders::Create({root_});
    ASSERT_TRUE(held.has_value()) << held.error().message;
    EXPECT_TRUE(fs::is_directory(root_ / ".git"));
    EXPECT_TRUE(fs::is_empty(root_ / ".git"));
    EXPECT_EQ(held->paths(), std::vector<fs::path>{root_ / ".git"});
  }
  EXPECT_FALSE(fs::exists(root_ / ".git"));
}

TEST_F(GitPlaceholderTest, LeavesAnExistingRepositoryAlone) {
  fs::create_directories(root_ / ".git/objects");
  {
    auto held = GitPlaceholders::Create({root_});
    ASSERT_TRUE(held.has_value());
  }
  EXPECT_TRUE(fs::exists(root_ / ".git/objects"));  // not empty: never removed
}

TEST_F(GitPlaceholderTest, LeavesAGitFileAlone) {
  std::ofstream(root_ / ".git") << "gitdir: /elsewhere\n";
  {
    auto held = GitPlaceholders::Create({root_});
    ASSERT_TRUE(held.has_value());
    EXPECT_TRUE(held->paths().empty());
  }
  EXPECT_TRUE(fs::is_regular_file(root_ / ".git"));
}

TEST_F(GitPlaceholderTest, KeepsARepositoryInitialisedOnTheHostDuringTheRun) {
  {
    auto held = GitPlaceholders::Create({root_});
    ASSERT_TRUE(held.has_value());
    std::ofstream(root_ / ".git/HEAD") << "ref: refs/heads/main\n";  // `git init` meanwhile
  }
  EXPECT_TRUE(fs::exists(root_ / ".git/HEAD"));
}

TEST_F(GitPlaceholderTest, TheLastOfTwoConcurrentRunsRemovesIt) {
  auto first = GitPlaceholders::Create({root_});
  ASSERT_TRUE(first.has_value());
  {
    auto second = GitPlaceholders::Create({root_});  // adopts the same empty directory
    ASSERT_TRUE(second.has_value());
  }
  EXPECT_TRUE(fs::exists(root_ / ".git")) << "removed while another run still needed it";
  first = GitPlaceholders{};
  EXPECT_FALSE(fs::exists(root_ / ".git"));
}

TEST_F(GitPlaceholderTest, AdoptsAndRemovesAnEmptyPlaceholderLeftByAKilledRun) {
  fs::create_directory(root_ / ".git");
  { auto held = GitPlaceholders::Create({root_}); }
  EXPECT_FALSE(fs::exists(root_ / ".git"));
}

TEST_F(GitPlaceholderTest, NeverFollowsASymlinkedGit) {
  fs::create_directory(root_ / "target");
  fs::create_directory_symlink(root_ / "target", root_ / ".git");
  {
    auto held = GitPlaceholders::Create({root_});
    ASSERT_TRUE(held.has_value());
    EXPECT_TRUE(held->paths().empty());
  }
  EXPECT_TRUE(fs::is_symlink(root_ / ".git"));
  EXPECT_TRUE(fs::exists(root_ / "target"));
}

TEST_F(GitPlaceholderTest, SkipsARootNobodyCanCreateItIn) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  ::chmod(root_.c_str(), 0555);
  auto held = GitPlaceholders::Create({root_});
  ::chmod(root_.c_str(), 0755);
  ASSERT_TRUE(held.has_value()) << held.error().message;
  EXPECT_TRUE(held->paths().empty());
  EXPECT_FALSE(fs::exists(root_ / ".git"));
}

TEST_F(GitPlaceholderTest, FailsWithThePathWhenTheRootIsMissing) {
  auto held = GitPlaceholders::Create({root_ / "missing"});
  ASSERT_FALSE(held.has_value());
  EXPECT_NE(held.error().message.find((root_ / "missing").string()), std::string::npos);
}

}  // namespace
}  // namespace cordon::plan
