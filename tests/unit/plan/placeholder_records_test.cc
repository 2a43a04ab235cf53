#include "plan/placeholder_records.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plan/host_placeholders.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

class PlaceholderRecordsTest : public ::testing::Test {
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

  // A `.git` placeholder in each of `roots`.
  static std::vector<Placeholder> Git(const std::vector<fs::path>& roots) {
    std::vector<Placeholder> wanted;
    for (const fs::path& root : roots) wanted.push_back({root, ".git", true});
    return wanted;
  }

  std::shared_ptr<const PlaceholderRecords> Records() const {
    return PlaceholderRecords::Open(runtime_.string());
  }

  // A run that is killed while it holds the placeholders of `roots`: nothing of its own
  // clean-up runs (as with SIGKILL), its locks go with it.
  void KilledRun(const std::vector<fs::path>& roots) const {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto held = HostPlaceholders::Hold(Git(roots), Records());
      if (held) new HostPlaceholders(std::move(*held));  // never released: they stay
      ::_exit(held.has_value() ? 0 : 1);
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
TEST_F(PlaceholderRecordsTest, AKilledRunsPlaceholdersGoAtTheNextStart) {
  KilledRun({base_ / "a", base_ / "b"});
  EXPECT_TRUE(fs::is_directory(base_ / "a/.git"));
  EXPECT_TRUE(fs::is_directory(base_ / "b/.git"));
  EXPECT_EQ(RecordCount(), 1u) << "one record per run";
  EXPECT_EQ(Records()->CleanUp(), 2);
  EXPECT_FALSE(fs::exists(base_ / "a/.git"));
  EXPECT_FALSE(fs::exists(base_ / "b/.git"));
  EXPECT_EQ(RecordCount(), 0u);
}

// The twins: a placeholder a live run holds stays (its run removes it when done), and so does
// one that became a repository on the host; a record whose directory is another one by now
// (removed and made anew) leaves that directory alone.
TEST_F(PlaceholderRecordsTest, WhatIsHeldOrNoLongerThePlaceholderStays) {
  std::optional<HostPlaceholders> live;
  {
    auto held = HostPlaceholders::Hold(Git({base_ / "a"}), Records());
    ASSERT_TRUE(held.has_value()) << held.error().message;
    live = std::move(*held);
  }
  KilledRun({base_ / "b"});
  std::ofstream(base_ / "b/.git/HEAD") << "ref: refs/heads/main\n";  // `git init` since
  EXPECT_EQ(Records()->CleanUp(), 1);  // settled: the repository is the user's
  EXPECT_TRUE(fs::is_directory(base_ / "a/.git")) << "removed under a live run";
  EXPECT_TRUE(fs::exists(base_ / "b/.git/HEAD"));
  EXPECT_EQ(RecordCount(), 1u) << "the live run's record is kept, the repository's forgotten";
  live.reset();
  EXPECT_FALSE(fs::exists(base_ / "a/.git"));
  EXPECT_EQ(RecordCount(), 0u) << "a run that removes its placeholder forgets it";

  KilledRun({base_ / "a"});
  fs::remove(base_ / "a/.git");
  fs::create_directory(base_ / "a/other");
  fs::create_directory(base_ / "a/.git");  // another directory under the recorded name
  fs::remove(base_ / "a/other");
  EXPECT_EQ(Records()->CleanUp(), 1);  // settled: not the placeholder recorded
  EXPECT_TRUE(fs::is_directory(base_ / "a/.git"));
}

// A record holds what it was given, whatever the paths hold (a nested project's name is the
// workspace's to choose: a newline, a name that looks like a field); anything else, cut short
// or of another form, reads as no record at all.
TEST(PlaceholderRecordText, ReadsBackWhatWasWrittenAndNothingElse) {
  const std::vector<RecordedPlaceholder> held = {
      {"/w/a b", ".git", 2049, 131},
      {"/w/a b/x\ny", "cordon placeholders 1", 2049, 18446744073709551615ull},
  };
  const std::string text = RecordText(held);
  EXPECT_EQ(ParseRecord(text), held);
  EXPECT_EQ(ParseRecord(RecordText({})), std::vector<RecordedPlaceholder>{});
  EXPECT_EQ(ParseRecord(text.substr(0, text.size() - 1)), std::nullopt) << "cut short";
  EXPECT_EQ(ParseRecord(text.substr(0, text.size() - 3)), std::nullopt) << "cut in a number";
  EXPECT_EQ(ParseRecord("host-run:/w\n.git"), std::nullopt) << "an older cordon's form";
  std::string relative_root = text;
  relative_root.replace(relative_root.find("/w/a b"), 1, "w");
  EXPECT_EQ(ParseRecord(relative_root), std::nullopt);
  std::string bad_number = RecordText({{"/w", ".git", 1, 2}});
  bad_number.replace(bad_number.find(std::string("\0"
                                                 "1\0",
                                                 3)) +
                         1,
                     1, "x");
  EXPECT_EQ(ParseRecord(bad_number), std::nullopt);
  EXPECT_EQ(ParseRecord(RecordText({{"/w", "/abs", 1, 2}})), std::nullopt);
}

// Records only in a runtime directory of this user's alone.
TEST_F(PlaceholderRecordsTest, ARuntimeDirectoryOthersMayWriteIsNotUsed) {
  fs::permissions(runtime_, fs::perms::all);
  EXPECT_EQ(Records(), nullptr);
  EXPECT_EQ(PlaceholderRecords::Open(std::nullopt), nullptr);
  EXPECT_EQ(PlaceholderRecords::Open("relative/dir"), nullptr);
  fs::permissions(runtime_, fs::perms::owner_all);
  EXPECT_NE(Records(), nullptr);
}

}  // namespace
}  // namespace cordon::plan
