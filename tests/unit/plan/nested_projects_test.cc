#include "plan/nested_projects.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kMarkers = {".claude", ".git", ".github", ".mcp.json", ".vscode"};

class NestedProjectsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "cordon-nested.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = fs::canonical(pattern);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(root_ / "locked", fs::perms::owner_all, ignored);
    fs::remove_all(root_);
  }
  void Touch(const fs::path& relative) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "{}\n";
  }
  std::vector<fs::path> Scan(std::size_t depth, std::size_t max = kMaxNestedDirectories) {
    auto scan = ScanNestedProjects(root_, kMarkers, depth, max);
    EXPECT_TRUE(scan) << scan.error().message;
    return scan ? scan->projects : std::vector<fs::path>{};
  }
  fs::path root_;
};

TEST_F(NestedProjectsTest, FindsRepositoriesAndAgentConfigsWithinTheDepth) {
  fs::create_directories(root_ / "repo/.git");
  Touch("tools/.git");  // a worktree's or submodule's .git file
  Touch("packages/web/.vscode/tasks.json");
  Touch("packages/api/.mcp.json");
  fs::create_directories(root_ / "a/b/c/.git");  // three levels down
  Touch(".claude/settings.json");                // the root's own: not a nested project
  Touch("src/main.c");
  EXPECT_EQ(Scan(2), (std::vector<fs::path>{root_ / "packages/api", root_ / "packages/web",
                                            root_ / "repo", root_ / "tools"}));
  EXPECT_EQ(Scan(3),
            (std::vector<fs::path>{root_ / "a/b/c", root_ / "packages/api", root_ / "packages/web",
                                   root_ / "repo", root_ / "tools"}));
  EXPECT_EQ(Scan(1), (std::vector<fs::path>{root_ / "repo", root_ / "tools"}));
  EXPECT_TRUE(Scan(0).empty());
}

TEST_F(NestedProjectsTest, NeverEntersGitPackageManagerOrMarkerDirectoriesNorFollowsLinks) {
  fs::create_directories(root_ / ".git/modules/sub/.git");
  fs::create_directories(root_ / "node_modules/dep/.git");
  fs::create_directories(root_ / ".github/actions/x/.git");
  fs::create_directories(root_ / "elsewhere/repo/.git");
  fs::create_symlink(root_ / "elsewhere", root_ / "link");
  fs::create_directories(root_ / "real/.git");
  // "elsewhere/repo" is found where it is, never through the link.
  EXPECT_EQ(Scan(3), (std::vector<fs::path>{root_ / "elsewhere/repo", root_ / "real"}));
}

TEST_F(NestedProjectsTest, MoreDirectoriesThanTheBoundRefusesNamingTheSetting) {
  for (int i = 0; i < 5; ++i) fs::create_directories(root_ / ("d" + std::to_string(i)));
  EXPECT_TRUE(ScanNestedProjects(root_, kMarkers, 2, 6));  // the root and five directories
  auto over = ScanNestedProjects(root_, kMarkers, 2, 5);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(over.error().message.find("nested_project_depth"), std::string::npos)
      << over.error().message;
}

// A command can make thousands of nested projects for the next command to protect; more than
// kMaxNestedProjects refuses, naming the setting. The twin: as many as the bound, found.
TEST_F(NestedProjectsTest, MoreProjectsThanTheBoundRefusesNamingTheSetting) {
  SandboxConfig config;
  config.mode = SandboxMode::kWorkspaceWrite;
  for (std::size_t i = 0; i < kMaxNestedProjects; ++i) {
    fs::create_directories(root_ / ("p" + std::to_string(i)) / ".git");
  }
  auto bound = FindNestedProjects(config, {root_}, nullptr);
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(bound->size(), kMaxNestedProjects);
  fs::create_directories(root_ / "one-more/.git");
  auto over = FindNestedProjects(config, {root_}, nullptr);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(over.error().message.find("nested_project_depth"), std::string::npos)
      << over.error().message;
}

TEST_F(NestedProjectsTest, ADirectoryOfTheCallersThatCannotBeReadRefuses) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every directory";
  fs::create_directories(root_ / "locked/repo/.git");
  fs::permissions(root_ / "locked", fs::perms::none);
  auto scan = ScanNestedProjects(root_, kMarkers, 2);
  ASSERT_FALSE(scan);
  EXPECT_NE(scan.error().message.find(root_ / "locked"), std::string::npos) << scan.error().message;
}

TEST_F(NestedProjectsTest, TheCacheSearchesAgainOnlyWhenTheAnswerCouldChange) {
  fs::create_directories(root_ / "repo/.git");
  fs::create_directories(root_ / "src/lib");
  NestedProjectsCache cache;
  auto projects = [&] {
    auto found = cache.Projects(root_, kMarkers, 2);
    EXPECT_TRUE(found) << found.error().message;
    return found ? *found : std::vector<fs::path>{};
  };
  EXPECT_EQ(projects(), std::vector<fs::path>{root_ / "repo"});
  EXPECT_EQ(projects(), std::vector<fs::path>{root_ / "repo"});
  EXPECT_EQ(cache.scans(), 1u);
  // What a build and cordon's own placeholders do: files written, markers in the root and in a
  // known project coming and going, directories made below the search's depth.
  Touch("src/lib/out.o");
  Touch("notes.txt");
  fs::create_directory(root_ / ".claude");
  fs::remove(root_ / ".claude");
  fs::create_directory(root_ / "repo/.vscode");
  fs::remove(root_ / "repo/.vscode");
  fs::create_directories(root_ / "src/lib/deep/er");
  EXPECT_EQ(projects(), std::vector<fs::path>{root_ / "repo"});
  EXPECT_EQ(cache.scans(), 1u);
  // A marker in a directory that is no project yet.
  Touch("src/.mcp.json");
  EXPECT_EQ(projects(), (std::vector<fs::path>{root_ / "repo", root_ / "src"}));
  EXPECT_EQ(cache.scans(), 2u);
  // A new directory within the depth (it could hold a project later: it must be watched).
  fs::create_directory(root_ / "new");
  EXPECT_EQ(projects().size(), 2u);
  EXPECT_EQ(cache.scans(), 3u);
  fs::create_directory(root_ / "new/.git");
  EXPECT_EQ(projects(), (std::vector<fs::path>{root_ / "new", root_ / "repo", root_ / "src"}));
  // A project moved away, and one removed.
  fs::rename(root_ / "new", root_ / "src/lib/moved");
  fs::remove_all(root_ / "repo");
  EXPECT_EQ(projects(), std::vector<fs::path>{root_ / "src"});
  // Every answer is the one a fresh search gives.
  EXPECT_EQ(projects(), Scan(2));
}

}  // namespace
}  // namespace cordon::plan
