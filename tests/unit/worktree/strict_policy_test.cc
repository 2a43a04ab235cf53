#include "worktree/strict_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cordon::worktree {
namespace {

TEST(ApplyStrictPolicy, ForcesWorkspaceWriteEvenWhenTheConfigSaysOff) {
  Config config;
  config.sandbox.mode = SandboxMode::kOff;
  (void)ApplyStrictPolicy(config);
  EXPECT_EQ(config.sandbox.mode, SandboxMode::kWorkspaceWrite);
}

TEST(ApplyStrictPolicy, ForcesWorkspaceWriteOverReadOnly) {
  Config config;
  config.sandbox.mode = SandboxMode::kReadOnly;
  (void)ApplyStrictPolicy(config);
  EXPECT_EQ(config.sandbox.mode, SandboxMode::kWorkspaceWrite);
}

TEST(ApplyStrictPolicy, DropsExtraWritableRootsAndReturnsThem) {
  Config config;
  config.sandbox.writable_roots = {"/srv/cache", "/home/u/.npm"};
  const auto dropped = ApplyStrictPolicy(config);
  EXPECT_TRUE(config.sandbox.writable_roots.empty());
  EXPECT_THAT(dropped, ::testing::ElementsAre("/srv/cache", "/home/u/.npm"));
}

TEST(ApplyStrictPolicy, ReturnsNothingWhenNoRootWasConfigured) {
  Config config;
  EXPECT_TRUE(ApplyStrictPolicy(config).empty());
}

TEST(ApplyStrictPolicy, ForcesGitMetadataProtection) {
  Config config;
  config.sandbox.protect_git_metadata = false;
  (void)ApplyStrictPolicy(config);
  EXPECT_TRUE(config.sandbox.protect_git_metadata);
}

TEST(ApplyStrictPolicy, KeepsTheConfiguredNetworkEitherWay) {
  Config allowed;
  allowed.sandbox.network = NetworkPolicy::kAllow;
  (void)ApplyStrictPolicy(allowed);
  EXPECT_EQ(allowed.sandbox.network, NetworkPolicy::kAllow);
  Config denied;
  denied.sandbox.network = NetworkPolicy::kDeny;
  (void)ApplyStrictPolicy(denied);
  EXPECT_EQ(denied.sandbox.network, NetworkPolicy::kDeny);
}

TEST(CheckWorktreeFlags, AcceptsNoModeOrWorkspaceWrite) {
  EXPECT_TRUE(CheckWorktreeFlags(false, ""));
  EXPECT_TRUE(CheckWorktreeFlags(false, "workspace_write"));
}

TEST(CheckWorktreeFlags, RefusesUnsafeAndOtherModesByName) {
  auto unsafe = CheckWorktreeFlags(true, "");
  ASSERT_FALSE(unsafe);
  EXPECT_THAT(unsafe.error().message, ::testing::HasSubstr("--unsafe contradicts --worktree"));
  auto read_only = CheckWorktreeFlags(false, "read_only");
  ASSERT_FALSE(read_only);
  EXPECT_THAT(read_only.error().message, ::testing::HasSubstr("--mode read_only"));
}

TEST(DroppedRootsNotice, NamesEveryDroppedRoot) {
  EXPECT_THAT(DroppedRootsNotice({"/a", "/b"}), ::testing::HasSubstr("(/a, /b)"));
}

TEST(DroppedRootsNotice, IsEmptyWhenNothingWasDropped) { EXPECT_EQ(DroppedRootsNotice({}), ""); }

}  // namespace
}  // namespace cordon::worktree
