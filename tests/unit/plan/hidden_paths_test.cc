#include "plan/hidden_paths.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace cordon::plan {
namespace {

class HiddenPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cordon-hidden-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    home_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(home_); }
  bool Has(const std::vector<MountOp>& ops, MountOpKind kind, const std::filesystem::path& p) {
    return std::any_of(ops.begin(), ops.end(),
                       [&](const MountOp& op) { return op.kind == kind && op.path == p; });
  }
  std::filesystem::path home_;
};

// The test home lies under /tmp, which the sandbox replaces: it is in view only when the
// workspace (or a writable root) holds it, so the tests pass it as the workspace.
std::vector<MountOp> Ops(const SandboxConfig& config, const std::filesystem::path& home,
                         const std::vector<std::filesystem::path>& roots = {}) {
  return BuildHiddenPathOps(FindHiddenTargets(config, {home}), roots, home);
}

TEST_F(HiddenPaths, DirectoriesAndFilesOfTheBuiltinListAreMasked) {
  std::filesystem::create_directory(home_ / ".ssh");
  std::ofstream(home_ / ".netrc") << "secret";
  std::ofstream(home_ / "notes.txt") << "not secret";
  auto ops = Ops({}, home_);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, home_ / ".ssh"));
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / ".netrc"));
  EXPECT_FALSE(Has(ops, MountOpKind::kMaskFile, home_ / "notes.txt"));
  EXPECT_EQ(ops.size(), 2u) << "absent entries of the list are skipped";
  for (const MountOp& op : ops) EXPECT_FALSE(op.optional) << "a vanished secret fails the run";
}

TEST_F(HiddenPaths, ASymlinkedSecretIsMaskedAtItsTarget) {
  std::filesystem::create_directory(home_ / "real-aws");
  std::filesystem::create_directory_symlink(home_ / "real-aws", home_ / ".aws");
  auto ops = Ops({}, home_);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, home_ / "real-aws"));
}

TEST_F(HiddenPaths, ConfiguredPathsAreAddedAndAnEmptyHomeAddsNothing) {
  std::ofstream(home_ / "token") << "x";
  SandboxConfig config;
  config.hidden_paths = {home_ / "token", home_ / "absent"};
  auto ops = BuildHiddenPathOps(FindHiddenTargets(config, {}), {}, home_);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / "token"));
}

TEST_F(HiddenPaths, ASecretBelowAWritableRootHasItsAncestorsPinnedFirst) {
  std::filesystem::create_directories(home_ / "a" / "b");
  std::ofstream(home_ / "a" / "b" / "prod.env") << "x";
  SandboxConfig config;
  config.hidden_paths = {home_ / "a" / "b" / "prod.env"};
  auto ops = Ops(config, home_, {home_});
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].path, home_ / "a");
  EXPECT_EQ(ops[1].path, home_ / "a" / "b");
  EXPECT_EQ(ops[0].kind, MountOpKind::kBindWritable);
  EXPECT_TRUE(ops[0].optional);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / "a" / "b" / "prod.env"));
  // Twin: outside a writable root nothing can move it, so nothing is pinned.
  EXPECT_EQ(Ops(config, home_).size(), 1u);
}

TEST_F(HiddenPaths, SecretsUnderThePrivateTmpAreNotMaskedUnlessAWorkspaceHoldsThem) {
  std::filesystem::create_directory(home_ / ".ssh");
  EXPECT_TRUE(BuildHiddenPathOps(FindHiddenTargets({}, {home_}), {}, "/nonexistent").empty());
  EXPECT_EQ(BuildHiddenPathOps(FindHiddenTargets({}, {home_}), {}, home_).size(), 1u);
}

TEST_F(HiddenPaths, TheReadAllowListLeavesOutExactlyTheHiddenPaths) {
  std::filesystem::create_directory(home_ / ".ssh");
  std::filesystem::create_directory(home_ / "proj");
  std::ofstream(home_ / "notes.txt") << "x";
  std::filesystem::create_symlink(home_ / ".ssh", home_ / "link-to-ssh");
  auto readable = ReadAllowList(FindHiddenTargets({}, {home_}));
  auto has = [&](const std::filesystem::path& p) {
    return std::find(readable.begin(), readable.end(), p) != readable.end();
  };
  EXPECT_TRUE(has(home_ / "proj"));
  EXPECT_TRUE(has(home_ / "notes.txt"));
  EXPECT_TRUE(has("/usr"));
  EXPECT_FALSE(has(home_ / ".ssh"));
  EXPECT_FALSE(has(home_ / "link-to-ssh")) << "a symlink is checked at its target";
  EXPECT_FALSE(has(home_)) << "an ancestor of a hidden path is split, never granted whole";
  EXPECT_FALSE(has("/tmp"));
}

TEST_F(HiddenPaths, CallerHomesAreDeduplicatedAndCanonical) {
  auto homes = CallerHomes(home_ / ".");
  ASSERT_FALSE(homes.empty());
  EXPECT_EQ(homes.front(), home_);
  EXPECT_EQ(std::count(homes.begin(), homes.end(), home_), 1);
}

}  // namespace
}  // namespace cordon::plan
