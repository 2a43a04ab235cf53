#include "plan/home_view.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "plan/mount_ops.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

class HomeViewPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/var/tmp/cordon-home-view-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    base_ = fs::canonical(tmpl);
    home_ = base_ / "home";
    for (const char* dir :
         {"proj", ".cargo/bin", ".rustup", "bin", "granted", ".config/gh", "other",
          "miniconda3/bin", "miniconda3/lib", ".local/bin", ".local/share/keyrings"}) {
      fs::create_directories(home_ / dir);
    }
    std::ofstream(home_ / ".gitconfig") << "[user]\n";
    std::ofstream(home_ / ".git-credentials") << "secret\n";
    config_.home = HomeView::kHidden;
    config_.readable_paths = {home_ / "granted", home_ / "absent"};
  }
  void TearDown() override { fs::remove_all(base_); }

  HomeViewPlan Plan(const std::vector<std::string>& env = {}) const {
    // /var/tmp is replaced in the sandbox; the test's home lies there, so it is not private here.
    return PlanHomeView(config_, config_.home, {home_}, {home_ / "proj"}, env, {"/tmp"});
  }
  static bool Has(const std::vector<fs::path>& list, const fs::path& path) {
    return std::find(list.begin(), list.end(), path) != list.end();
  }

  fs::path base_, home_;
  SandboxConfig config_;
};

TEST_F(HomeViewPlanTest, TheHomeIsAnAreaAndOnlyToolPathsPathEntriesAndGrantsAreLetIn) {
  const HomeViewPlan view = Plan({"PATH=" + (home_ / "bin").string() + ":/usr/bin:relative",
                                  "PATH=" + (home_ / "other").string()});
  EXPECT_TRUE(Has(view.areas, home_));
  for (const char* granted : {".cargo/bin", ".rustup", ".gitconfig", "bin", "granted"}) {
    EXPECT_TRUE(Has(view.grants, home_ / granted)) << granted;
  }
  // The twins: a credential file, an absent grant, a directory of a second PATH (getenv reads
  // the first), the workspace (a root: bound as ever) and anything else stay out.
  for (const char* hidden : {".git-credentials", "absent", "other", "proj", ".config/gh"}) {
    EXPECT_FALSE(Has(view.grants, home_ / hidden)) << hidden;
  }
  EXPECT_FALSE(Has(view.grants, "/usr/bin"));  // outside every area: visible anyway
}

// A PATH directory named bin brings its toolchain's prefix (where its lib/ lies), except where
// the prefix is the home itself or ~/.local (keyrings, browser data).
TEST_F(HomeViewPlanTest, APathBinDirectoryBringsItsPrefixButNeverTheHomeOrDotLocal) {
  const HomeViewPlan view =
      Plan({"PATH=" + (home_ / "miniconda3/bin").string() + ":" + (home_ / ".local/bin").string() +
            ":" + (home_ / "bin").string()});
  EXPECT_TRUE(Has(view.grants, home_ / "miniconda3"));
  EXPECT_FALSE(Has(view.grants, home_ / "miniconda3/bin")) << "inside the prefix's grant";
  EXPECT_TRUE(Has(view.grants, home_ / ".local/bin"));
  EXPECT_FALSE(Has(view.grants, home_ / ".local"));
  EXPECT_TRUE(Has(view.grants, home_ / "bin"));
  EXPECT_FALSE(Has(view.grants, home_));
}

// Where the caller's toolchain variables say a toolchain is, it is granted; a variable that
// names the home or a directory every tool shares is not, nor is a PATH prefix that is one.
TEST_F(HomeViewPlanTest, ToolchainVariablesBringTheirDirectoriesButNeverASharedOne) {
  fs::create_directories(home_ / "jdk/bin");
  fs::create_directories(home_ / "venvs/app/bin");
  fs::create_directories(home_ / ".config/bin");
  const HomeViewPlan view = Plan(
      {"JAVA_HOME=" + (home_ / "jdk").string(), "VIRTUAL_ENV=" + (home_ / "venvs/app").string(),
       "CONDA_PREFIX=" + home_.string(), "GOROOT=" + (home_ / ".config").string(),
       "DATABASE_URL=" + (home_ / "other").string(), "PATH=" + (home_ / ".config/bin").string()});
  EXPECT_TRUE(Has(view.grants, home_ / "jdk"));
  EXPECT_TRUE(Has(view.grants, home_ / "venvs/app"));
  EXPECT_FALSE(Has(view.grants, home_));
  EXPECT_FALSE(Has(view.grants, home_ / ".config")) << "holds every tool's tokens";
  EXPECT_TRUE(Has(view.grants, home_ / ".config/bin")) << "the PATH entry itself is granted";
  EXPECT_FALSE(Has(view.grants, home_ / "other")) << "not a toolchain variable";
}

// The home mounted a second time (decision 0040): that place is an area whether the home is
// hidden or read-only (whose masks are by path); read-only grants nothing. A second mount inside
// the workspace is not (the planner refuses it), nor one that is not a directory.
TEST_F(HomeViewPlanTest, ASecondMountOfTheHomeIsAnAreaInEitherView) {
  fs::create_directories(base_ / "alias");
  fs::create_directories(home_ / "proj/inner");
  std::ofstream(base_ / "file") << "";
  const std::vector<MountEntry> table = ParseMountInfo(
      "1 0 9:9 / / rw - ext4 x rw\n"
      "2 1 9:9 " +
      home_.string() + " " + (base_ / "alias").string() +
      " rw - ext4 x rw\n"
      "3 1 9:9 " +
      home_.string() + " " + (home_ / "proj/inner").string() +
      " rw - ext4 x rw\n"
      "4 1 9:9 " +
      (home_ / ".gitconfig").string() + " " + (base_ / "file").string() + " rw - ext4 x rw\n");
  const HomeViewPlan hidden =
      PlanHomeView(config_, HomeView::kHidden, {home_}, {home_ / "proj"}, {}, {"/tmp"}, table);
  EXPECT_TRUE(Has(hidden.areas, home_));
  EXPECT_TRUE(Has(hidden.areas, base_ / "alias"));
  EXPECT_FALSE(hidden.grants.empty());
  const HomeViewPlan read_only =
      PlanHomeView(config_, HomeView::kReadOnly, {home_}, {home_ / "proj"}, {}, {"/tmp"}, table);
  EXPECT_EQ(read_only.areas, (std::vector<fs::path>{base_ / "alias"}));
  EXPECT_TRUE(read_only.grants.empty());
  // The twin: without a second mount, read-only has no view at all.
  EXPECT_TRUE(
      PlanHomeView(config_, HomeView::kReadOnly, {home_}, {}, {}, {"/tmp"}, {}).areas.empty());
}

// A PATH entry or VIRTUAL_ENV in the workspace that an earlier command turned into a link out
// of it (`.venv -> ~/.mozilla`) grants nothing: where it leads was the command's choice. The
// twin: the same entry as a real directory in the workspace is the workspace's own.
TEST_F(HomeViewPlanTest, ALinkInTheWorkspaceCannotChooseAGrant) {
  fs::create_directories(home_ / ".mozilla/bin");
  fs::create_directory_symlink(home_ / ".mozilla", home_ / "proj/.venv");
  const HomeViewPlan view = Plan({"VIRTUAL_ENV=" + (home_ / "proj/.venv").string(),
                                  "PATH=" + (home_ / "proj/.venv/bin").string()});
  EXPECT_FALSE(Has(view.grants, home_ / ".mozilla"));
  EXPECT_FALSE(Has(view.grants, home_ / ".mozilla/bin"));
  // A link the user made outside every root is theirs: followed.
  fs::create_directory_symlink(home_ / "miniconda3", home_ / "conda-link");
  EXPECT_TRUE(
      Has(Plan({"CONDA_PREFIX=" + (home_ / "conda-link").string()}).grants, home_ / "miniconda3"));
}

// A built-in tool path or a readable path that an earlier command re-pointed from a writable
// root (`rm -rf ~/go/bin; ln -s ~ ~/go/bin` with ~/go writable) grants nothing; nor does a tool
// path that leads to a home, even one inside a wider area (/home/u below /home).
TEST_F(HomeViewPlanTest, AToolPathOrReadablePathCannotBeRepointedAtTheHome) {
  fs::create_directories(home_ / "go");
  fs::create_directories(home_ / ".mozilla");
  fs::create_directory_symlink(home_ / ".mozilla", home_ / "go/bin");
  config_.readable_paths = {home_ / "go/notes"};
  fs::create_directory_symlink(home_ / ".mozilla", home_ / "go/notes");
  const HomeViewPlan view =
      PlanHomeView(config_, config_.home, {home_}, {home_ / "proj", home_ / "go"}, {}, {"/tmp"});
  EXPECT_FALSE(Has(view.grants, home_ / ".mozilla"));
  // A second caller home below the area, its tool path a link to that home (made by the user,
  // outside every root): a home is never granted for a toolchain's sake.
  const fs::path inner = home_ / "u";
  fs::create_directories(inner / ".cargo");
  fs::create_directory_symlink(inner, inner / ".cargo/bin");
  const HomeViewPlan nested =
      PlanHomeView(config_, config_.home, {home_, inner}, {home_ / "proj"}, {}, {"/tmp"});
  EXPECT_FALSE(Has(nested.grants, inner));
  // Twins: the same tool path as a real directory is granted; a readable path the user made a
  // link outside every root is followed.
  fs::remove(home_ / "go/bin");
  fs::create_directories(home_ / ".nvm");
  EXPECT_TRUE(
      Has(PlanHomeView(config_, config_.home, {home_}, {home_ / "proj"}, {}, {"/tmp"}).grants,
          home_ / ".nvm"));
  config_.readable_paths = {home_ / "link-to-other"};
  fs::create_directory_symlink(home_ / "other", home_ / "link-to-other");
  EXPECT_TRUE(Has(Plan().grants, home_ / "other"));
}

// A user's own link that leads through the workspace (dotfiles kept in the project the agent
// works in: ~/.local/bin -> ~/dotfiles/bin) meets a second link the command planted there
// (`bin -> ~/.mozilla`): where the path leads was the command's choice, nothing is granted.
// The twin: the user's link to a directory outside every root is followed.
TEST_F(HomeViewPlanTest, AUserLinkThroughTheWorkspaceCannotBeRedirectedByTheCommand) {
  fs::create_directories(home_ / ".mozilla");
  fs::create_directories(home_ / "dotfiles");
  fs::create_directory_symlink(home_ / ".mozilla", home_ / "dotfiles/bin");
  fs::remove_all(home_ / ".local/bin");
  fs::create_directory_symlink(home_ / "dotfiles/bin", home_ / ".local/bin");
  config_.readable_paths = {home_ / "dotfiles/bin/"};
  const HomeViewPlan view = PlanHomeView(config_, config_.home, {home_}, {home_ / "dotfiles"},
                                         {"PATH=" + (home_ / ".local/bin").string()}, {"/tmp"});
  EXPECT_FALSE(Has(view.grants, home_ / ".mozilla"));
  fs::remove(home_ / ".local/bin");
  fs::create_directories(home_ / "tools/bin");
  fs::create_directory_symlink(home_ / "tools/bin", home_ / ".local/bin");
  const HomeViewPlan twin = PlanHomeView(config_, config_.home, {home_}, {home_ / "dotfiles"},
                                         {"PATH=" + (home_ / ".local/bin").string()}, {"/tmp"});
  EXPECT_TRUE(Has(twin.grants, home_ / "tools/bin"));
}

TEST_F(HomeViewPlanTest, AGrantOfTheWholeHomeOrAHomeInsideARootIsNoHole) {
  HomeViewPlan view = Plan({"PATH=" + home_.string() + ":" + (home_ / "bin").string()});
  EXPECT_FALSE(Has(view.grants, home_));
  EXPECT_TRUE(Has(view.grants, home_ / "bin"));
  // A home inside a writable root is the command's anyway; a home below /tmp is private.
  EXPECT_FALSE(
      Has(PlanHomeView(config_, config_.home, {home_}, {base_}, {}, {"/tmp"}).areas, home_));
  EXPECT_FALSE(Has(PlanHomeView(config_, config_.home, {home_}, {}, {}, {base_}).areas, home_));
  // read_only: no view at all.
  config_.home = HomeView::kReadOnly;
  EXPECT_TRUE(Plan().areas.empty());
}

TEST_F(HomeViewPlanTest, AViewGoesFirstItsGrantsBeforeTheRootsInThemAndHiddenMasksGo) {
  config_.readable_paths = {home_};  // the loader refuses it; here: a grant holding a root
  HomeViewPlan view;
  view.areas = {home_};
  view.grants = {home_ / "granted"};
  std::vector<MountOp> mounts = {
      {MountOpKind::kTmpfs, "/tmp"},
      {MountOpKind::kBindWritable, home_ / "proj"},
      {MountOpKind::kMaskDirectory, home_ / ".config/gh"},  // hidden by the view: dropped
      {MountOpKind::kMaskFile, home_ / "granted/token"},    // inside a grant: kept
      {MountOpKind::kMaskFile, home_ / "proj/.env"},        // inside the root: kept
  };
  AddHomeView(view, {home_ / "granted", home_ / "proj"}, mounts);
  // A grant that holds the workspace is bound before it, or it would cover it read-only.
  mounts.push_back({MountOpKind::kBindReadOnly, home_ / "other"});
  mounts.push_back({MountOpKind::kBindReadOnly, home_ / "proj/.git"});
  OrderPinsBeforeReadOnlyBinds(mounts);
  std::vector<std::pair<MountOpKind, fs::path>> order;
  for (const MountOp& op : mounts) order.emplace_back(op.kind, op.path);
  const std::vector<std::pair<MountOpKind, fs::path>> expected = {
      {MountOpKind::kHomeView, home_},
      {MountOpKind::kTmpfs, "/tmp"},
      {MountOpKind::kBindReadOnly, home_ / "granted"},
      {MountOpKind::kBindReadOnly, home_ / "other"},
      {MountOpKind::kBindWritable, home_ / "proj"},
      {MountOpKind::kBindReadOnly, home_ / "proj/.git"},
      {MountOpKind::kMaskFile, home_ / "granted/token"},
      {MountOpKind::kMaskFile, home_ / "proj/.env"},
  };
  EXPECT_EQ(order, expected);
}

}  // namespace
}  // namespace cordon::plan
