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

TEST_F(HiddenPaths, DirectoriesAndFilesOfTheBuiltinListAreMasked) {
  std::filesystem::create_directory(home_ / ".ssh");
  std::ofstream(home_ / ".netrc") << "secret";
  std::ofstream(home_ / "notes.txt") << "not secret";
  auto ops = BuildHiddenPathOps({}, home_);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, home_ / ".ssh"));
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / ".netrc"));
  EXPECT_FALSE(Has(ops, MountOpKind::kMaskFile, home_ / "notes.txt"));
  EXPECT_EQ(ops.size(), 2u) << "absent entries of the list are skipped";
}

TEST_F(HiddenPaths, ASymlinkedSecretIsMaskedAtItsTarget) {
  std::filesystem::create_directory(home_ / "real-aws");
  std::filesystem::create_directory_symlink(home_ / "real-aws", home_ / ".aws");
  auto ops = BuildHiddenPathOps({}, home_);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, home_ / "real-aws"));
}

TEST_F(HiddenPaths, ConfiguredPathsAreAddedAndAnEmptyHomeAddsNothing) {
  std::ofstream(home_ / "token") << "x";
  SandboxConfig config;
  config.hidden_paths = {home_ / "token", home_ / "absent"};
  auto ops = BuildHiddenPathOps(config, "");
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / "token"));
}

TEST_F(HiddenPaths, TheHostRuntimeDirectoryIsMaskedOnce) {
  auto ops = BuildRuntimeDirMasks({home_});
  // /var/run points to /run: one mask, on the real directory.
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, "/run"));
}

TEST_F(HiddenPaths, ARuntimeDirectoryHoldingAWritableRootIsNotMasked) {
  // Masking /run would hide the writable root itself.
  EXPECT_TRUE(BuildRuntimeDirMasks({"/run/user"}).empty());
}

}  // namespace
}  // namespace cordon::plan
