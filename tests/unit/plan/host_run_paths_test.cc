#include "plan/host_run_paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "plan/mount_ops.h"
#include "planner_fixture.h"

namespace cordon::plan {
namespace {

using namespace plan_test;

class HostRunPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/cordon-host-run-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = std::filesystem::canonical(pattern);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Touch(const std::filesystem::path& relative) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << "{}\n";
  }
  std::filesystem::path root_;
};

TEST_F(HostRunPathsTest, PresentEntriesAreFoundAndAbsentOnesListed) {
  std::filesystem::create_directories(root_ / ".claude/hooks");
  Touch(".mcp.json");
  Touch(".clinerules");  // a file: no hooks/ directory can be in it
  const auto found = FindHostRunPaths(
      {".claude/", ".mcp.json", ".envrc", ".clinerules/hooks/", ".github/hooks/"}, {root_});
  ASSERT_TRUE(found) << found.error().message;
  // ".clinerules" is a file: read-only, it cannot become a directory holding hooks/.
  EXPECT_EQ(found->present, (std::vector<std::filesystem::path>{
                                root_ / ".claude", root_ / ".mcp.json", root_ / ".clinerules"}));
  EXPECT_EQ(found->absent,
            (std::vector<Placeholder>{{root_, ".envrc", false}, {root_, ".github/hooks", true}}));
}

TEST_F(HostRunPathsTest, APlaceholderAnotherRunMadeOrAKilledRunLeftCountsAsAbsent) {
  std::filesystem::create_symlink(kPlaceholderLinkTarget, root_ / ".mcp.json");
  std::filesystem::create_directory(root_ / ".claude");
  std::filesystem::permissions(root_ / ".claude",
                               static_cast<std::filesystem::perms>(kPlaceholderDirectoryMode));
  std::filesystem::create_directory(root_ / ".vscode");  // an empty directory of the user's
  const auto found = FindHostRunPaths({".mcp.json", ".claude/", ".vscode/"}, {root_});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->present, std::vector<std::filesystem::path>{root_ / ".vscode"});
  EXPECT_EQ(found->absent,
            (std::vector<Placeholder>{{root_, ".mcp.json", false}, {root_, ".claude", true}}));
  EXPECT_TRUE(IsPlaceholder(root_ / ".mcp.json"));
  EXPECT_TRUE(IsPlaceholder(root_ / ".claude"));
  EXPECT_FALSE(IsPlaceholder(root_ / ".vscode"));
  // The twin: a placeholder directory with something in it is the user's now.
  Touch(".claude/settings.json");
  EXPECT_FALSE(IsPlaceholder(root_ / ".claude"));
}

// Runs beside each other in one root: one removes its placeholder while another looks at it.
// An entry gone between its lstat and the look inside is absent now, never "a link of the
// user's" (which refuses the run: CI saw that once under the sanitizer).
TEST_F(HostRunPathsTest, APlaceholderRemovedWhileLookedAtIsAbsentNotAForeignLink) {
  std::filesystem::create_symlink(kPlaceholderLinkTarget, root_ / ".mcp.json");
  std::filesystem::create_directory(root_ / ".claude");
  std::filesystem::permissions(root_ / ".claude",
                               static_cast<std::filesystem::perms>(kPlaceholderDirectoryMode));
  struct stat link {};
  struct stat dir {};
  ASSERT_EQ(::lstat((root_ / ".mcp.json").c_str(), &link), 0);
  ASSERT_EQ(::lstat((root_ / ".claude").c_str(), &dir), 0);
  std::filesystem::remove(root_ / ".mcp.json");
  std::filesystem::remove(root_ / ".claude");
  EXPECT_TRUE(IsPlaceholder(root_ / ".mcp.json", link));
  EXPECT_TRUE(IsPlaceholder(root_ / ".claude", dir));
  // The twin: a link of the user's that is still there is no placeholder.
  Touch("real.json");
  std::filesystem::create_symlink("real.json", root_ / ".mcp.json");
  ASSERT_EQ(::lstat((root_ / ".mcp.json").c_str(), &link), 0);
  EXPECT_FALSE(IsPlaceholder(root_ / ".mcp.json", link));
}

TEST_F(HostRunPathsTest, ALinkAsTheEntryOrOnTheWayToItIsRefusedNamingBothWaysOut) {
  Touch("real.json");
  std::filesystem::create_symlink("real.json", root_ / ".mcp.json");
  auto refused = FindHostRunPaths({".mcp.json"}, {root_});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(Contains(refused.error().message, (root_ / ".mcp.json").string()));
  EXPECT_TRUE(Contains(refused.error().message, "symbolic link"));
  EXPECT_TRUE(Contains(refused.error().message, R"("remove": [".mcp.json"])"))
      << refused.error().message;

  std::filesystem::create_directories(root_ / "ci/hooks");
  std::filesystem::create_symlink("ci", root_ / ".github");
  refused = FindHostRunPaths({".github/hooks/"}, {root_});
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, (root_ / ".github").string() + " is a symbolic"))
      << refused.error().message;
  // The twin: a real directory on the way is fine.
  std::filesystem::remove(root_ / ".github");
  std::filesystem::create_directories(root_ / ".github/hooks");
  auto found = FindHostRunPaths({".github/hooks/"}, {root_});
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(found->present, std::vector<std::filesystem::path>{root_ / ".github/hooks"});
}

bool ReadOnlyBind(const LaunchPlan& plan, const std::filesystem::path& path) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const MountOp& op) {
    return op.kind == MountOpKind::kBindReadOnly && op.path == path;
  });
}

TEST_F(HostRunPathsTest, ThePlanBindsPresentEntriesReadOnlyUnlessRemovedOrOff) {
  std::filesystem::create_directories(root_ / ".vscode");
  Touch(".envrc");
  Touch("notes.txt");
  PlanRequest request = Request();
  request.workspace = root_;
  auto plan = Plan(Default(), Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(ReadOnlyBind(*plan, root_ / ".vscode"));
  EXPECT_TRUE(ReadOnlyBind(*plan, root_ / ".envrc"));
  EXPECT_FALSE(ReadOnlyBind(*plan, root_ / "notes.txt"));  // ordinary files stay writable

  Config removed = Default();
  removed.sandbox.host_run_files.remove = {".vscode/"};
  plan = Plan(removed, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(ReadOnlyBind(*plan, root_ / ".vscode"));
  EXPECT_TRUE(ReadOnlyBind(*plan, root_ / ".envrc"));

  Config off = Default();
  off.sandbox.protect_host_run_files = false;
  plan = Plan(off, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(ReadOnlyBind(*plan, root_ / ".vscode"));
  EXPECT_FALSE(ReadOnlyBind(*plan, root_ / ".envrc"));

  std::filesystem::create_symlink("notes.txt", root_ / ".aider.conf.yml");
  EXPECT_FALSE(Plan(Default(), Everything(), request));
  EXPECT_TRUE(Plan(off, Everything(), request));
}

TEST_F(HostRunPathsTest, CapabilitiesListTheEntriesInForce) {
  Config config = Default();
  config.sandbox.host_run_files.remove = {".idea/"};
  config.sandbox.host_run_files.add = {"tools/hooks/"};
  const Capabilities caps = DescribeCapabilities(config, Everything());
  EXPECT_EQ(std::count(caps.host_run_files.begin(), caps.host_run_files.end(), ".idea/"), 0);
  EXPECT_EQ(caps.host_run_files.back(), "tools/hooks/");
  EXPECT_EQ(std::count(caps.host_run_files.begin(), caps.host_run_files.end(), ".claude/"), 1);
  config.sandbox.protect_host_run_files = false;
  EXPECT_TRUE(DescribeCapabilities(config, Everything()).host_run_files.empty());
}

TEST_F(HostRunPathsTest, NestedProjectsArePinnedAndProtectedLikeTheWorkspace) {
  std::filesystem::create_directories(root_ / "libs/repo/.git/hooks");
  Touch("packages/web/.vscode/tasks.json");
  Touch("src/main.c");
  PlanRequest request = Request();
  request.workspace = root_;
  Config config = Default();
  config.sandbox.hidden_paths = {root_ / "libs/repo/.git/hooks/x"};  // pins inside .git
  // The grants of a hidden home are read-only binds outside every root, bound first.
  config.sandbox.home = HomeView::kReadOnly;
  auto plan = Plan(config, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(ReadOnlyBind(*plan, root_ / "libs/repo/.git"));
  EXPECT_TRUE(ReadOnlyBind(*plan, root_ / "packages/web/.vscode"));
  // Each project and each directory up to the workspace is pinned, and every pin comes before
  // the first read-only bind (bubblewrap binds a pin from the host).
  std::vector<std::filesystem::path> pins;
  std::size_t first_read_only = plan->mounts.size();
  for (std::size_t i = 0; i < plan->mounts.size(); ++i) {
    const MountOp& op = plan->mounts[i];
    if (op.kind == MountOpKind::kBindReadOnly && first_read_only == plan->mounts.size()) {
      first_read_only = i;
    }
    if (op.kind == MountOpKind::kBindWritable && op.optional) {
      EXPECT_LT(i, first_read_only) << op.path;
      pins.push_back(op.path);
    }
  }
  for (const char* pinned : {"libs", "libs/repo", "packages", "packages/web"}) {
    EXPECT_EQ(std::count(pins.begin(), pins.end(), root_ / pinned), 1) << pinned;
  }
  EXPECT_EQ(std::count(pins.begin(), pins.end(), root_ / "src"), 0);
  // Their absent entries are held like the workspace's.
  auto held = [&](const std::filesystem::path& project, const char* entry) {
    return std::count(plan->placeholders.begin(), plan->placeholders.end(),
                      Placeholder{project, entry, entry[std::strlen(entry) - 1] == '/'}) +
           std::count(plan->placeholders.begin(), plan->placeholders.end(),
                      Placeholder{project, std::string(entry, std::strlen(entry) - 1), true});
  };
  EXPECT_EQ(held(root_ / "libs/repo", ".mcp.json"), 1);
  EXPECT_EQ(held(root_ / "packages/web", ".claude/"), 1);
  EXPECT_EQ(held(root_ / "packages/web", ".git/"), 1);
  EXPECT_EQ(held(root_ / "src", ".mcp.json"), 0);

  config.sandbox.nested_project_depth = 1;  // "libs/repo" and "packages/web" are two down
  plan = Plan(config, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(ReadOnlyBind(*plan, root_ / "libs/repo/.git"));
  EXPECT_EQ(held(root_ / "libs/repo", ".mcp.json"), 0);
}

// A placeholder's parents are pinned before any placeholder is covered, outermost first, once
// each; a present entry's parents are pinned by the plan, before its read-only bind.
TEST_F(HostRunPathsTest, TheDirectoriesOnTheWayArePinnedBeforeWhatTheyHold) {
  const std::vector<Placeholder> placeholders = {{root_, ".config/mise.toml", false},
                                                 {root_, ".config/mise", true},
                                                 {root_, ".github/hooks", true},
                                                 {root_, ".mcp.json", false}};
  EXPECT_EQ(PlaceholderParents(placeholders),
            (std::vector<std::filesystem::path>{root_ / ".config", root_ / ".github"}));
  const std::vector<PlaceholderCover> covers = PlaceholderCovers(placeholders);
  ASSERT_EQ(covers.size(), 6u);
  EXPECT_TRUE(covers[0].pin && covers[1].pin);
  EXPECT_EQ(covers[0].path, root_ / ".config");
  for (std::size_t i = 2; i < covers.size(); ++i) EXPECT_FALSE(covers[i].pin) << covers[i].path;
  EXPECT_EQ(covers[5].path, root_ / ".mcp.json");

  EXPECT_EQ(ProtectionPins({root_}, {root_ / "libs/x"},
                           {root_ / ".github/hooks", root_ / "gitdirs/main", root_ / ".git"}),
            (std::vector<std::filesystem::path>{root_ / ".github", root_ / "gitdirs",
                                                root_ / "libs", root_ / "libs/x"}));
}

}  // namespace
}  // namespace cordon::plan
