#include "bwrap/argv.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "golden.h"
#include "sample_plans.h"

namespace cordon::bwrap {
namespace {

const BwrapInvocation kHow{"/usr/bin/bwrap", {"/usr/libexec/cordon/cordon", "__exec", "--"}};

// One word per line; a word containing a newline would be ambiguous, so it is escaped.
std::string Lines(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& word : argv) {
    for (char c : word) out += c == '\n' ? std::string("\\n") : std::string(1, c);
    out += '\n';
  }
  return out;
}

std::vector<std::string> Render(const plan::LaunchPlan& plan) {
  Result<std::vector<std::string>> argv = RenderBwrapArgv(plan, kHow);
  EXPECT_TRUE(argv.has_value()) << (argv ? "" : argv.error().message);
  return argv ? *argv : std::vector<std::string>{};
}

TEST(BwrapArgv, WorkspaceWriteWithNetworkDenyMatchesGolden) {
  testing::ExpectMatchesGolden(Lines(Render(testing::WorkspaceWriteNetworkDeny())),
                               "bwrap_workspace_write_network_deny.txt");
}

TEST(BwrapArgv, ReadOnlyWithNetworkAllowMatchesGolden) {
  testing::ExpectMatchesGolden(Lines(Render(testing::ReadOnlyNetworkAllow())),
                               "bwrap_read_only_network_allow.txt");
}

TEST(BwrapArgv, WorktreeWithExtraRootMatchesGolden) {
  testing::ExpectMatchesGolden(Lines(Render(testing::WorktreeWithExtraRoot())),
                               "bwrap_worktree_extra_root.txt");
}

TEST(BwrapArgv, CommandWordsFollowTheTrampolineUnchanged) {
  const plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  const std::vector<std::string> argv = Render(plan);
  auto separator = std::find(argv.begin(), argv.end(), "--");
  ASSERT_NE(separator, argv.end());
  std::vector<std::string> tail(separator + 1, argv.end());
  std::vector<std::string> expected = kHow.trampoline;
  expected.insert(expected.end(), plan.argv.begin(), plan.argv.end());
  EXPECT_EQ(tail, expected);  // the shell text stays one word: never re-parsed by a shell
}

// Binds opened before bwrap starts go by descriptor; a skipped optional one is left out; the
// twin: the rest of the plan renders as by path.
TEST(BwrapArgv, BindsWithADescriptorGoByDescriptorAndSkippedOnesAreLeftOut) {
  const plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  BwrapInvocation how = kHow;
  how.bind_fds.assign(plan.mounts.size(), kBindByPath);
  std::vector<std::string> expected_binds;
  int next = 9;
  bool skipped_one = false;
  for (std::size_t i = 0; i < plan.mounts.size(); ++i) {
    const plan::MountOp& op = plan.mounts[i];
    if (op.kind != plan::MountOpKind::kBindWritable &&
        op.kind != plan::MountOpKind::kBindReadOnly) {
      continue;
    }
    if (!skipped_one && op.kind == plan::MountOpKind::kBindReadOnly) {
      how.bind_fds[i] = kBindSkipped;
      skipped_one = true;
      continue;
    }
    how.bind_fds[i] = next;
    expected_binds.push_back(fmt::format(
        "{} {} {}", op.kind == plan::MountOpKind::kBindWritable ? "--bind-fd" : "--ro-bind-fd",
        next++, op.path.string()));
  }
  ASSERT_GT(next, 9) << "the sample plan has no bind";
  Result<std::vector<std::string>> argv = RenderBwrapArgv(plan, how);
  ASSERT_TRUE(argv.has_value()) << argv.error().message;
  std::vector<std::string> binds;
  for (std::size_t i = 0; i + 2 < argv->size(); ++i) {
    const std::string& word = (*argv)[i];
    if (word == "--bind-fd" || word == "--ro-bind-fd") {
      binds.push_back(fmt::format("{} {} {}", word, (*argv)[i + 1], (*argv)[i + 2]));
    }
    // The whole host stays bound by path ("/" is not a planned bind).
    EXPECT_FALSE(word == "--bind" || word == "--bind-try") << "a writable bind by path";
  }
  EXPECT_EQ(binds, expected_binds);
  // One descriptor per mount, or none at all.
  how.bind_fds.pop_back();
  EXPECT_FALSE(RenderBwrapArgv(plan, how).has_value());
}

TEST(BwrapArgv, NetworkNamespaceOnlyWhenThePlanHasOne) {
  const auto deny = Render(testing::WorkspaceWriteNetworkDeny());
  const auto allow = Render(testing::ReadOnlyNetworkAllow());
  EXPECT_NE(std::find(deny.begin(), deny.end(), "--unshare-net"), deny.end());
  EXPECT_EQ(std::find(allow.begin(), allow.end(), "--unshare-net"), allow.end());
}

TEST(BwrapArgv, UserNamespaceOnlyWhenThePlanHasOne) {
  const auto with_user = Render(testing::WorkspaceWriteNetworkDeny());
  const auto root_caller = Render(testing::WorktreeWithExtraRoot());
  EXPECT_NE(std::find(with_user.begin(), with_user.end(), "--unshare-user"), with_user.end());
  EXPECT_EQ(std::find(root_caller.begin(), root_caller.end(), "--unshare-user"), root_caller.end());
}

TEST(BwrapArgv, RefusesAPlanWithoutMountOrPidNamespace) {
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.namespaces = {};
  auto argv = RenderBwrapArgv(plan, kHow);
  ASSERT_FALSE(argv.has_value());
  EXPECT_EQ(argv.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(argv.error().message.find("native backend"), std::string::npos);
}

TEST(BwrapArgv, RefusesLandlockOrSeccompWithoutTrampoline) {
  auto argv = RenderBwrapArgv(testing::WorkspaceWriteNetworkDeny(), {"/usr/bin/bwrap", {}});
  ASSERT_FALSE(argv.has_value());
  EXPECT_NE(argv.error().message.find("trampoline"), std::string::npos);
}

TEST(BwrapArgv, AcceptsNoTrampolineWhenNothingNeedsIt) {
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.landlock = {};
  plan.seccomp = {};
  auto argv = RenderBwrapArgv(plan, {"/usr/bin/bwrap", {}});
  ASSERT_TRUE(argv.has_value());
  EXPECT_EQ(argv->at(argv->size() - plan.argv.size() - 1), "--");
}

TEST(BwrapArgv, RefusesARelativeBwrapPath) {
  auto argv = RenderBwrapArgv(testing::WorkspaceWriteNetworkDeny(), {"bwrap", kHow.trampoline});
  ASSERT_FALSE(argv.has_value());
  EXPECT_NE(argv.error().message.find("not absolute"), std::string::npos);
}

TEST(BwrapArgv, RefusesAnEnvironmentEntryWithoutName) {
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.env.push_back("=oops");
  EXPECT_FALSE(RenderBwrapArgv(plan, kHow).has_value());
}

TEST(BwrapArgv, RefusesAnUnsandboxedPlan) {
  plan::LaunchPlan plan = testing::WorkspaceWriteNetworkDeny();
  plan.sandboxed = false;
  EXPECT_FALSE(RenderBwrapArgv(plan, kHow).has_value());
}

}  // namespace
}  // namespace cordon::bwrap
