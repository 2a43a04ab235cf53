#include "plan/host_placeholders.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "plan/host_run_paths.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

class HostPlaceholdersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-host-placeholders-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = fs::canonical(tmpl);
    root_ = base_ / "ws";
    runtime_ = base_ / "runtime";
    fs::create_directories(root_);
    fs::create_directories(runtime_);
    fs::permissions(runtime_, fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(base_); }

  std::vector<Placeholder> Wanted() const {
    return {{root_, ".mcp.json", false}, {root_, ".claude", true}, {root_, ".github/hooks", true}};
  }
  std::shared_ptr<const PlaceholderRecords> Records() const {
    return PlaceholderRecords::Open(runtime_.string());
  }
  bool Nothing() const { return fs::is_empty(root_); }

  fs::path base_, root_, runtime_;
};

TEST_F(HostPlaceholdersTest, EachKindIsMadeForTheRunAndGoneAfterIt) {
  {
    Result<HostPlaceholders> held = HostPlaceholders::Hold(Wanted());
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->covered(), Wanted());
    EXPECT_EQ(fs::read_symlink(root_ / ".mcp.json"), kPlaceholderLinkTarget);
    EXPECT_FALSE(fs::exists(root_ / ".mcp.json"));  // dangling: absent to a tool on the host
    struct stat st {};
    ASSERT_EQ(::lstat((root_ / ".claude").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, kPlaceholderDirectoryMode);
    EXPECT_TRUE(IsPlaceholder(root_ / ".github/hooks"));
    EXPECT_TRUE(fs::is_directory(root_ / ".github"));  // made on the way
  }
  EXPECT_TRUE(Nothing()) << "left on the host after the run";
}

TEST_F(HostPlaceholdersTest, ConcurrentRunsShareThemAndTheLastOneRemovesThem) {
  std::optional<HostPlaceholders> first;
  {
    Result<HostPlaceholders> held = HostPlaceholders::Hold(Wanted());
    ASSERT_TRUE(held) << held.error().message;
    first = std::move(*held);
  }
  Result<HostPlaceholders> second = HostPlaceholders::Hold(Wanted());  // adopts them
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->covered(), Wanted());
  first.reset();  // not the last: they stay for the second run
  EXPECT_TRUE(fs::is_symlink(root_ / ".mcp.json"));
  EXPECT_TRUE(fs::is_directory(root_ / ".github/hooks"));
  *second = HostPlaceholders();  // the last one
  EXPECT_TRUE(Nothing());
}

// One run's links are names of one inode (decision 0036): a hard link costs the file system a
// directory entry, a new link an inode too. The twin: a root on another file system, where no
// hard link of the first can be made, gets a link of its own; all go after the run.
TEST_F(HostPlaceholdersTest, ARunsLinksAreHardLinksOfOneWhereTheFileSystemAllows) {
  const fs::path other = "/dev/shm";
  if (!fs::is_directory(other)) GTEST_SKIP() << "no /dev/shm";
  char tmpl[] = "/dev/shm/cordon-host-placeholders-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path elsewhere = fs::canonical(tmpl);
  struct stat a {
  }, b{}, c{}, d{};
  {
    Result<HostPlaceholders> held = HostPlaceholders::Hold({{root_, ".mcp.json", false},
                                                            {root_, ".claude", false},
                                                            {elsewhere, ".envrc", false},
                                                            {elsewhere, ".vscode", false}});
    ASSERT_TRUE(held) << held.error().message;
    ASSERT_EQ(::lstat((root_ / ".mcp.json").c_str(), &a), 0);
    ASSERT_EQ(::lstat((root_ / ".claude").c_str(), &b), 0);
    ASSERT_EQ(::lstat((elsewhere / ".envrc").c_str(), &c), 0);
    ASSERT_EQ(::lstat((elsewhere / ".vscode").c_str(), &d), 0);
    for (const fs::path& p : {root_ / ".claude", elsewhere / ".envrc", elsewhere / ".vscode"}) {
      EXPECT_EQ(fs::read_symlink(p), kPlaceholderLinkTarget) << p;
    }
  }
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_nlink, 2u);
  EXPECT_NE(a.st_dev, c.st_dev);
  EXPECT_EQ(c.st_ino, d.st_ino) << "the model moved to the other file system";
  EXPECT_TRUE(Nothing()) << "left on the host after the run";
  EXPECT_TRUE(fs::is_empty(elsewhere));
  fs::remove_all(elsewhere);
}

// A run that is not the last keeps its record; the last, which adopted its placeholders,
// settles it once they are gone: no record stays behind runs that overlapped.
TEST_F(HostPlaceholdersTest, TheLastRunSettlesTheRecordsOfTheRunsItOverlapped) {
  std::optional<HostPlaceholders> first;
  {
    Result<HostPlaceholders> held = HostPlaceholders::Hold(Wanted(), Records());
    ASSERT_TRUE(held) << held.error().message;
    first = std::move(*held);
  }
  Result<HostPlaceholders> second = HostPlaceholders::Hold(Wanted(), Records());
  ASSERT_TRUE(second) << second.error().message;
  const fs::path records = runtime_ / "cordon-placeholders";
  auto count = [&] {
    return std::distance(fs::directory_iterator(records), fs::directory_iterator());
  };
  EXPECT_EQ(count(), 2);
  first.reset();
  EXPECT_EQ(count(), 2) << "the first run's placeholders are still held";
  *second = HostPlaceholders();
  EXPECT_TRUE(Nothing());
  EXPECT_EQ(count(), 0);
}

TEST_F(HostPlaceholdersTest, WhatTheHostPutsInThemMeanwhileStaysAsTheUsers) {
  {
    Result<HostPlaceholders> held = HostPlaceholders::Hold(Wanted());
    ASSERT_TRUE(held) << held.error().message;
    std::ofstream(root_ / ".claude/settings.local.json") << "{}";  // Claude Code, on the host
    std::ofstream(root_ / ".github/workflow.yml") << "on: push";
  }
  EXPECT_TRUE(fs::exists(root_ / ".claude/settings.local.json"));
  EXPECT_TRUE(fs::exists(root_ / ".github/workflow.yml"));
  EXPECT_FALSE(fs::exists(root_ / ".github/hooks"));
  EXPECT_FALSE(fs::is_symlink(root_ / ".mcp.json"));
  struct stat st {};
  ASSERT_EQ(::lstat((root_ / ".claude").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);  // not a placeholder any more
  EXPECT_FALSE(IsPlaceholder(root_ / ".claude"));
}

TEST_F(HostPlaceholdersTest, AFileThatAppearedSinceThePlanFailsTheRunAndStays) {
  std::ofstream(root_ / ".mcp.json") << "{\"mcpServers\": {}}";
  Result<HostPlaceholders> held = HostPlaceholders::Hold(Wanted());
  ASSERT_FALSE(held);
  EXPECT_NE(held.error().message.find(".mcp.json appeared while the command was starting"),
            std::string::npos)
      << held.error().message;
  EXPECT_EQ(fs::file_size(root_ / ".mcp.json"), 18u);
}

TEST_F(HostPlaceholdersTest, ARootNobodyCanCreateInIsSkipped) {
  if (::geteuid() == 0) GTEST_SKIP() << "root may create anywhere";
  fs::permissions(root_, fs::perms::owner_read | fs::perms::owner_exec);
  Result<HostPlaceholders> held = HostPlaceholders::Hold(Wanted());
  fs::permissions(root_, fs::perms::owner_all);
  ASSERT_TRUE(held) << held.error().message;
  EXPECT_TRUE(held->covered().empty());
}

TEST_F(HostPlaceholdersTest, AKilledRunsPlaceholdersGoAtTheNextStart) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = HostPlaceholders::Hold(Wanted(), Records());
    if (held) new HostPlaceholders(std::move(*held));  // never released, as with SIGKILL
    ::_exit(held.has_value() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(status, 0);
  EXPECT_TRUE(fs::is_symlink(root_ / ".mcp.json"));
  // A run holding the root keeps them; once it is done, the clean-up removes them all.
  {
    Result<HostPlaceholders> other = HostPlaceholders::Hold({{root_, ".envrc", false}});
    ASSERT_TRUE(other) << other.error().message;
    Records()->CleanUp();
    EXPECT_TRUE(fs::is_symlink(root_ / ".mcp.json"));
  }
  Records()->CleanUp();
  EXPECT_TRUE(Nothing());
}

}  // namespace
}  // namespace cordon::plan
