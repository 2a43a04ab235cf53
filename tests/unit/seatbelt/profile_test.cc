#include "seatbelt/profile.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "../bwrap/golden.h"
#include "../bwrap/sample_plans.h"

namespace cordon::seatbelt {
namespace {

// The profile text, then each parameter as NAME=VALUE: what sandbox-exec receives.
std::string Describe(const SeatbeltProfile& profile) {
  std::string out = profile.text;
  out += "\n;; parameters\n";
  for (const auto& [name, value] : profile.params) out += ";; " + name + "=" + value + "\n";
  return out;
}

const std::filesystem::path kPrivateDir = "/private/var/folders/xy/T/cordon-run-1";

TEST(SeatbeltProfile, WorkspaceWriteWithNetworkDenyMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)),
                               "seatbelt_workspace_write_network_deny.sb");
}

TEST(SeatbeltProfile, ReadOnlyWithNetworkAllowMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(testing::ReadOnlyNetworkAllow(), kPrivateDir, true);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)),
                               "seatbelt_read_only_network_allow.sb");
}

TEST(SeatbeltProfile, WorktreeWithExtraRootMatchesGolden) {
  auto policy = SeatbeltPolicyFromPlan(testing::WorktreeWithExtraRoot(), kPrivateDir, false);
  testing::ExpectMatchesGolden(Describe(RenderSeatbelt(policy)), "seatbelt_worktree_extra_root.sb");
}

TEST(SeatbeltProfile, PathsNeverAppearInTheProfileText) {
  SeatbeltPolicy policy;
  const std::string hostile = "/Users/me/x\")) (allow default) ((\"";
  policy.writable = {hostile};
  policy.hidden_files = {"/Users/me/.netrc"};
  SeatbeltProfile profile = RenderSeatbelt(policy);
  EXPECT_EQ(profile.text.find("/Users"), std::string::npos);
  EXPECT_EQ(profile.text.find("(allow default)"), std::string::npos);
  ASSERT_EQ(profile.params.size(), 3u);  // WRITABLE_0, SOCKET_0, HIDDEN_FILE_0
  EXPECT_EQ(profile.params[0], (std::pair<std::string, std::string>{"WRITABLE_0", hostile}));
}

TEST(SeatbeltProfile, DenialsComeAfterTheAllowancesTheyNarrow) {
  // SBPL is last-match-wins: a git-metadata or credential denial before the write allowance
  // would be overridden by it.
  auto policy = SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false);
  const std::string text = RenderSeatbelt(policy).text;
  const auto allow_writes = text.find("(allow file-write*");
  const auto deny_git = text.find("(deny file-write*");
  const auto deny_secrets = text.find("(deny file-read* file-write*");
  ASSERT_NE(allow_writes, std::string::npos);
  ASSERT_NE(deny_git, std::string::npos);
  ASSERT_NE(deny_secrets, std::string::npos);
  EXPECT_LT(allow_writes, deny_git);
  EXPECT_LT(allow_writes, deny_secrets);
}

TEST(SeatbeltProfile, NetworkAllowedOnlyWhenAsked) {
  SeatbeltPolicy policy;
  policy.writable = {"/w"};
  EXPECT_EQ(RenderSeatbelt(policy).text.find("(allow network*)"), std::string::npos);
  policy.network_allowed = true;
  EXPECT_NE(RenderSeatbelt(policy).text.find("(allow network*)"), std::string::npos);
}

TEST(SeatbeltPolicy, ReadOnlyBindsCountOnlyInsideWritableSubtrees) {
  // read_only mode binds the workspace read-only: outside every writable subtree, so no rule.
  auto policy = SeatbeltPolicyFromPlan(testing::ReadOnlyNetworkAllow(), kPrivateDir, true);
  EXPECT_TRUE(policy.read_only.empty());
  auto write = SeatbeltPolicyFromPlan(testing::WorkspaceWriteNetworkDeny(), kPrivateDir, false);
  EXPECT_EQ(write.read_only, std::vector<std::filesystem::path>{"/home/dev/project/.git"});
}

TEST(SeatbeltPolicy, AMissingGitAtTheTopOfAWritableRootCannotBeCreated) {
  // No mount placeholder on macOS: the denial of the subpath also denies creating it.
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.mounts.erase(std::remove_if(plan.mounts.begin(), plan.mounts.end(),
                                   [](const plan::MountOp& op) {
                                     return op.kind == plan::MountOpKind::kBindReadOnly;
                                   }),
                    plan.mounts.end());
  plan.absent_protected = {"/home/dev/project/.git", "/elsewhere/.git"};
  auto policy = SeatbeltPolicyFromPlan(plan, kPrivateDir, false);
  // Only the one inside a writable subtree needs a rule; the other is read-only anyway.
  EXPECT_EQ(policy.read_only, std::vector<std::filesystem::path>{"/home/dev/project/.git"});
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  EXPECT_NE(profile.text.find("(deny file-write*\n  (subpath (param \"READ_ONLY_0\")))"),
            std::string::npos)
      << profile.text;
  // Twin: without protect_git_metadata (no absent_protected) nothing about .git is denied.
  plan.absent_protected.clear();
  EXPECT_TRUE(SeatbeltPolicyFromPlan(plan, kPrivateDir, false).read_only.empty());
}

TEST(SeatbeltPolicy, PinsAreNotWritableSubtreesButDenyRenamingTheDirectoryItself) {
  auto policy = SeatbeltPolicyFromPlan(testing::WorktreeWithExtraRoot(), kPrivateDir, false);
  EXPECT_EQ(policy.pinned, std::vector<std::filesystem::path>{"/work/tree/config"});
  EXPECT_EQ(std::count(policy.writable.begin(), policy.writable.end(), "/work/tree/config"), 0);
  const std::string text = RenderSeatbelt(policy).text;
  EXPECT_NE(text.find("(deny file-write*\n  (literal (param \"PINNED_0\")))"), std::string::npos)
      << text;
}

TEST(SeatbeltPolicy, ThePrivateDirectoryIsWritable) {
  auto policy = SeatbeltPolicyFromPlan(testing::ReadOnlyNetworkAllow(), kPrivateDir, true);
  EXPECT_EQ(policy.writable, std::vector<std::filesystem::path>{kPrivateDir});
}

TEST(SandboxExec, ArgvIsProfileParametersThenTheCommandUnchanged) {
  SeatbeltProfile profile{"(version 1)", {{"WRITABLE_0", "/a=b"}}};
  auto argv = SandboxExecArgv(profile, {"sh", "-c", "echo $HOME; ls"});
  EXPECT_EQ(argv,
            (std::vector<std::string>{kSandboxExec, "-p", "(version 1)", "-D", "WRITABLE_0=/a=b",
                                      "--", "sh", "-c", "echo $HOME; ls"}));
}

}  // namespace
}  // namespace cordon::seatbelt
