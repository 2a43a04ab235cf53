// PlanCommandMounts: what each command gets fresh on top of the session's mount view, and
// which plans the zygote refuses (they run one-shot). Which plans may share a zygote:
// tests/unit/plan/shape_test.cc.
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

// A workspace that is the host's /var/tmp (or /tmp) is bound over the private tmpfs at the
// same path: each command's fresh tmpfs goes under the re-attached bind, not over it.
TEST(PlanCommandMounts, ReattachesABindAtThePrivateTmpfsItself) {
  auto steps = PlanCommandMounts(Ops({{MountOpKind::kTmpfs, "/tmp"},
                                      {MountOpKind::kDirectory, "/tmp/.cordon-home"},
                                      {MountOpKind::kTmpfs, "/var/tmp"},
                                      {MountOpKind::kBindWritable, "/var/tmp"},
                                      {MountOpKind::kMaskFile, "/var/tmp/.env"}}));
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(Describe(*steps),
            "tmpfs /tmp;mkdir /tmp/.cordon-home;clone /var/tmp;tmpfs /var/tmp;attach /var/tmp;");
  // Twin: a tmpfs alone at that path is fresh, with nothing attached over it.
  auto alone = PlanCommandMounts(Ops({{MountOpKind::kTmpfs, "/var/tmp"}}));
  ASSERT_TRUE(alone.has_value());
  EXPECT_EQ(Describe(*alone), "tmpfs /var/tmp;");
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

// A /tmp that holds the workspace is an empty read-only view (plan/mount_ops.h): it stays the
// session's, and only the scratch tmpfs inside it is fresh for each command, with the HOME.
TEST(PlanCommandMounts, GivesTheScratchInsideAnEmptyViewAFreshFilesystem) {
  auto steps = PlanCommandMounts(Ops({{MountOpKind::kHomeView, "/tmp"},
                                      {MountOpKind::kTmpfs, "/tmp/.cordon-tmp"},
                                      {MountOpKind::kDirectory, "/tmp/.cordon-tmp/.cordon-home"},
                                      {MountOpKind::kTmpfs, "/var/tmp"},
                                      {MountOpKind::kBindWritable, "/tmp/ws"},
                                      {MountOpKind::kBindReadOnly, "/tmp/ws/.git"}}));
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(Describe(*steps),
            "tmpfs /tmp/.cordon-tmp;mkdir /tmp/.cordon-tmp/.cordon-home;tmpfs /var/tmp;");
  // Twin: the same tmpfs inside a bind (the host's tree, not an empty view) is refused.
  EXPECT_FALSE(PlanCommandMounts(Ops({{MountOpKind::kBindWritable, "/tmp"},
                                      {MountOpKind::kTmpfs, "/tmp/.cordon-tmp"}}))
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

}  // namespace
}  // namespace cordon::zygote
