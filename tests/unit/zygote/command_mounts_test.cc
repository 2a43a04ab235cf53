// PlanCommandMounts: what each command gets fresh on top of the session's mount view, and
// which plans the zygote refuses (they run one-shot). SameShape: which plans may share one.
#include "zygote/command_mounts.h"

#include <gtest/gtest.h>

#include "zygote/zygote.h"

namespace cordon::zygote {
namespace {

using plan::MountOp;
using plan::MountOpKind;

std::vector<MountOp> Ops(std::initializer_list<MountOp> ops) { return ops; }

std::string Describe(const std::vector<CommandMount>& steps) {
  std::string out;
  for (const CommandMount& m : steps) {
    switch (m.kind) {
      case CommandMountKind::kCloneTree:
        out += "clone ";
        break;
      case CommandMountKind::kTmpfs:
        out += "tmpfs ";
        break;
      case CommandMountKind::kDirectory:
        out += "mkdir ";
        break;
      case CommandMountKind::kAttach:
        out += "attach ";
        break;
    }
    out += m.path + ";";
  }
  return out;
}

TEST(PlanCommandMounts, GivesEachPrivateTmpfsAFreshFilesystemAndItsDirectories) {
  auto steps = PlanCommandMounts(Ops({{MountOpKind::kTmpfs, "/tmp"},
                                      {MountOpKind::kDirectory, "/tmp/.cordon-home"},
                                      {MountOpKind::kTmpfs, "/var/tmp"},
                                      {MountOpKind::kBindWritable, "/home/u/ws"}}));
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(Describe(*steps), "tmpfs /tmp;mkdir /tmp/.cordon-home;tmpfs /var/tmp;");
}

TEST(PlanCommandMounts, ReattachesAWorkspaceBeneathTmpWithWhatIsNestedInIt) {
  auto steps = PlanCommandMounts(Ops({{MountOpKind::kTmpfs, "/tmp"},
                                      {MountOpKind::kDirectory, "/tmp/.cordon-home"},
                                      {MountOpKind::kBindWritable, "/tmp/ws"},
                                      {MountOpKind::kBindReadOnly, "/tmp/ws/.git"},
                                      {MountOpKind::kMaskFile, "/tmp/ws/.env"}}));
  ASSERT_TRUE(steps.has_value());
  // The nested .git and mask travel in the recursive clone of /tmp/ws.
  EXPECT_EQ(Describe(*steps), "clone /tmp/ws;tmpfs /tmp;mkdir /tmp/.cordon-home;attach /tmp/ws;");
  EXPECT_EQ((*steps)[0].slot, (*steps)[3].slot);
}

TEST(PlanCommandMounts, RefusesAMaskBeneathTmpOutsideAnyReattachedTree) {
  // Twin of the test above: the same mask without its workspace bind cannot be replayed.
  EXPECT_FALSE(PlanCommandMounts(
                   Ops({{MountOpKind::kTmpfs, "/tmp"}, {MountOpKind::kMaskFile, "/tmp/ws/.env"}}))
                   .has_value());
}

TEST(PlanCommandMounts, RefusesATmpfsInsideAnEarlierBind) {
  EXPECT_FALSE(PlanCommandMounts(
                   Ops({{MountOpKind::kBindWritable, "/srv"}, {MountOpKind::kTmpfs, "/srv/tmp"}}))
                   .has_value());
  EXPECT_TRUE(
      PlanCommandMounts(Ops({{MountOpKind::kBindWritable, "/srv"}, {MountOpKind::kTmpfs, "/tmp"}}))
          .has_value());
}

TEST(PlanCommandMounts, RefusesMoreTreesThanItCanHold) {
  std::vector<MountOp> ops = {{MountOpKind::kTmpfs, "/tmp"}};
  for (int i = 0; i < kMaxClonedTrees; ++i) {
    ops.push_back({MountOpKind::kBindWritable, "/tmp/w" + std::to_string(i)});
  }
  EXPECT_TRUE(PlanCommandMounts(ops).has_value());
  ops.push_back({MountOpKind::kBindWritable, "/tmp/one-more"});
  EXPECT_FALSE(PlanCommandMounts(ops).has_value());
}

plan::LaunchPlan Shaped() {
  plan::LaunchPlan p;
  p.namespaces = {true, true, true, true, true, true};
  p.hostname = "cordon";
  p.mounts = {{MountOpKind::kTmpfs, "/tmp"}, {MountOpKind::kBindWritable, "/home/u/ws"}};
  p.argv = {"true"};
  return p;
}

TEST(SameShape, IgnoresWhatIsPerCommand) {
  plan::LaunchPlan other = Shaped();
  other.argv = {"make", "test"};
  other.cwd = "/home/u/ws/sub";
  other.env = {"A=b"};
  EXPECT_TRUE(SameShape(Shaped(), other));
}

TEST(SameShape, DiffersWhenAMountOrANamespaceDiffers) {
  plan::LaunchPlan git = Shaped();
  git.mounts.push_back({MountOpKind::kBindReadOnly, "/home/u/ws/.git"});
  EXPECT_FALSE(SameShape(Shaped(), git));
  plan::LaunchPlan net = Shaped();
  net.namespaces.net = false;
  EXPECT_FALSE(SameShape(Shaped(), net));
  plan::LaunchPlan host = Shaped();
  host.hostname = "other";
  EXPECT_FALSE(SameShape(Shaped(), host));
}

}  // namespace
}  // namespace cordon::zygote
