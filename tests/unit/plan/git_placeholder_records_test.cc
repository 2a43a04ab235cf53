#include "plan/git_placeholder_records.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plan/git_placeholder.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

class GitPlaceholderRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-gitrec-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = tmpl;
    runtime_ = base_ / "runtime";
    fs::create_directories(runtime_);
    fs::permissions(runtime_, fs::perms::owner_all);
    for (const char* name : {"a", "b"}) fs::create_directories(base_ / name);
  }
  void TearDown() override { fs::remove_all(base_); }

  std::shared_ptr<const GitPlaceholderRecords> Records() const {
    return GitPlaceholderRecords::Open(runtime_.string());
  }

  // A run that is killed while it holds the placeholders of `roots`: nothing of its own
  // clean-up runs (as with SIGKILL), its locks go with it.
  void KilledRun(const std::vector<fs::path>& roots) const {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto held = GitPlaceholders::Create(roots, Records());
      ::_exit(held.has_value() ? 0 : 1);  // no destructor: the placeholders stay
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_EQ(status, 0);
  }

  std::size_t RecordCount() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& entry :
         fs::directory_iterator(runtime_ / "cordon-placeholders")) {
      ++n;
    }
    return n;
  }

  fs::path base_;
  fs::path runtime_;
};

// A killed run's placeholders are removed at the next start, and their records with them.
TEST_F(GitPlaceholderRecordsTest, AKilledRunsPlaceholdersGoAtTheNextStart) {
  KilledRun({base_ / "a", base_ / "b"});
  EXPECT_TRUE(fs::is_directory(base_ / "a/.git"));
  EXPECT_TRUE(fs::is_directory(base_ / "b/.git"));
  EXPECT_EQ(RecordCount(), 2u);
  EXPECT_EQ(Records()->CleanUp(), 2);
  EXPECT_FALSE(fs::exists(base_ / "a/.git"));
  EXPECT_FALSE(fs::exists(base_ / "b/.git"));
  EXPECT_EQ(RecordCount(), 0u);
}

// The twins: a placeholder a live run holds stays (its run removes it when done), and so does
// one that became a repository on the host; a record whose directory is another one by now
// (removed and made anew) leaves that directory alone.
TEST_F(GitPlaceholderRecordsTest, WhatIsHeldOrNoLongerThePlaceholderStays) {
  auto live = GitPlaceholders::Create({base_ / "a"}, Records());
  ASSERT_TRUE(live.has_value()) << live.error().message;
  KilledRun({base_ / "b"});
  std::ofstream(base_ / "b/.git/HEAD") << "ref: refs/heads/main\n";  // `git init` since
  EXPECT_EQ(Records()->CleanUp(), 0);
  EXPECT_TRUE(fs::is_directory(base_ / "a/.git")) << "removed under a live run";
  EXPECT_TRUE(fs::exists(base_ / "b/.git/HEAD"));
  EXPECT_EQ(RecordCount(), 1u) << "the live run's record is kept, the repository's forgotten";
  live = GitPlaceholders{};
  EXPECT_FALSE(fs::exists(base_ / "a/.git"));
  EXPECT_EQ(RecordCount(), 0u) << "a run that removes its placeholder forgets it";

  KilledRun({base_ / "a"});
  fs::remove(base_ / "a/.git");
  fs::create_directory(base_ / "a/other");
  fs::create_directory(base_ / "a/.git");  // another directory under the recorded name
  fs::remove(base_ / "a/other");
  EXPECT_EQ(Records()->CleanUp(), 0);
  EXPECT_TRUE(fs::is_directory(base_ / "a/.git"));
}

// Records only in a runtime directory of this user's alone.
TEST_F(GitPlaceholderRecordsTest, ARuntimeDirectoryOthersMayWriteIsNotUsed) {
  fs::permissions(runtime_, fs::perms::all);
  EXPECT_EQ(Records(), nullptr);
  EXPECT_EQ(GitPlaceholderRecords::Open(std::nullopt), nullptr);
  EXPECT_EQ(GitPlaceholderRecords::Open("relative/dir"), nullptr);
  fs::permissions(runtime_, fs::perms::owner_all);
  EXPECT_NE(Records(), nullptr);
}

}  // namespace
}  // namespace cordon::plan
