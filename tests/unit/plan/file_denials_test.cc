// The rule and fix of a refused write, read from the plan's own mounts: each kind of mount
// over the target, and the fix that never widens to a secret, a home, `/`, a system directory
// or a protected path.
#include "plan/file_denials.h"

#include <gtest/gtest.h>

namespace cordon::plan {
namespace {

MountOp GitBind(const char* path) {
  MountOp op{MountOpKind::kBindReadOnly, path};
  op.git_metadata = true;
  return op;
}

LaunchPlan ViewPlan() {
  LaunchPlan plan;
  plan.workspace = "/work/ws";
  plan.mounts = {
      {MountOpKind::kTmpfs, "/tmp"},
      {MountOpKind::kHomeView, "/home/u"},
      {MountOpKind::kBindWritable, "/work/ws"},
      GitBind("/work/ws/.git"),
      // What a `gitdir:` file names, wherever it lies and whatever its name.
      GitBind("/work/ws/lib/gitdirs/lib"),
      {MountOpKind::kBindReadOnly, "/work/ws/.vscode"},
      {MountOpKind::kMaskDirectory, "/home/u/.ssh"},
      {MountOpKind::kMaskFile, "/work/ws/.env"},
  };
  plan.landlock.writable = {"/work/ws", "/tmp"};
  plan.placeholders = {{"/work/ws", ".envrc", false}, {"/work/ws/sub", ".git", true}};
  return plan;
}

Denial Explained(const LaunchPlan& plan, const std::string& target,
                 const std::string& layer = "mount view", const std::string& home = "/home/u") {
  std::vector<Denial> denials = {{"create", target, layer, "", ""}};
  ExplainFileDenials(plan, home, denials);
  return denials.front();
}

TEST(FileDenials, GitMetadataIsByDesignWithTheHostSideCommit) {
  for (const char* target :
       {"/work/ws/.git/index.lock", "/work/ws/sub/.git/HEAD", "/work/ws/lib/gitdirs/lib/HEAD"}) {
    const Denial d = Explained(ViewPlan(), target);
    EXPECT_NE(d.rule.find("protect_git_metadata"), std::string::npos) << target << d.rule;
    EXPECT_TRUE(d.fix.starts_with("by design")) << d.fix;
    EXPECT_NE(d.fix.find("git_commit"), std::string::npos) << d.fix;
  }
}

TEST(FileDenials, HostRunFilesAreByDesign) {
  for (const char* target : {"/work/ws/.vscode/tasks.json", "/work/ws/.envrc"}) {
    const Denial d = Explained(ViewPlan(), target);
    EXPECT_NE(d.rule.find("protect_host_run_files"), std::string::npos) << target << d.rule;
    EXPECT_TRUE(d.fix.starts_with("by design")) << d.fix;
  }
}

TEST(FileDenials, SecretsAndTheHiddenHomeAreByDesign) {
  const Denial secret = Explained(ViewPlan(), "/work/ws/.env");
  EXPECT_NE(secret.rule.find("hidden path"), std::string::npos) << secret.rule;
  EXPECT_TRUE(secret.fix.starts_with("by design")) << secret.fix;
  const Denial ssh = Explained(ViewPlan(), "/home/u/.ssh/config");
  EXPECT_NE(ssh.rule.find("hidden path"), std::string::npos) << ssh.rule;
  const Denial home = Explained(ViewPlan(), "/home/u/.cache/pip/x");
  EXPECT_NE(home.rule.find("sandbox.home"), std::string::npos) << home.rule;
  EXPECT_NE(home.fix.find("sandbox.tool_caches"), std::string::npos) << home.fix;
}

TEST(FileDenials, ReadOnlyModeOffersWorkspaceWrite) {
  LaunchPlan plan = ViewPlan();
  plan.mounts[2].kind = MountOpKind::kBindReadOnly;
  const Denial d = Explained(plan, "/work/ws/out.txt");
  EXPECT_EQ(d.rule, "sandbox.mode: read_only");
  EXPECT_NE(d.fix.find("--mode workspace_write"), std::string::npos) << d.fix;
}

// The rule is the mount's reason, not a guess from a name: a workspace called x.git in
// read_only mode is read_only mode's, and a file a host-run entry keeps is not git's.
TEST(FileDenials, AGitLikeNameIsNotTakenForGitMetadata) {
  LaunchPlan plan = ViewPlan();
  plan.workspace = "/work/repo.git";
  plan.mounts[2] = {MountOpKind::kBindReadOnly, "/work/repo.git"};
  plan.landlock.writable = {"/work/repo.git", "/tmp"};
  const Denial d = Explained(plan, "/work/repo.git/out.txt");
  EXPECT_EQ(d.rule, "sandbox.mode: read_only") << d.rule;
  plan.mounts.push_back({MountOpKind::kBindReadOnly, "/work/repo.git/tools.git"});
  const Denial host_run = Explained(plan, "/work/repo.git/tools.git/x");
  EXPECT_NE(host_run.rule.find("protect_host_run_files"), std::string::npos) << host_run.rule;
}

// The private /tmp's place taken by a read-only view because the workspace lies below it
// (decision 0046): said as such, never offered as a writable root.
TEST(FileDenials, TheTmpThatHoldsTheWorkspaceIsByDesign) {
  LaunchPlan plan;
  plan.workspace = "/tmp/ws";
  plan.mounts = {{MountOpKind::kHomeView, "/tmp"}, {MountOpKind::kBindWritable, "/tmp/ws"}};
  plan.landlock.writable = {"/tmp/ws"};
  const Denial d = Explained(plan, "/tmp/elsewhere");
  EXPECT_NE(d.rule.find("decision 0046"), std::string::npos) << d.rule;
  EXPECT_TRUE(d.fix.starts_with("by design")) << d.fix;
  EXPECT_EQ(d.fix.find("--writable-root"), std::string::npos) << d.fix;
  const Denial inside = Explained(plan, "/tmp/ws/out", "landlock");
  EXPECT_EQ(inside.rule.find("decision 0046"), std::string::npos) << inside.rule;
}

TEST(FileDenials, SystemDirectoriesTheRootAndHomesAreNeverOffered) {
  for (const char* target : {"/etc/x", "/usr/lib/python3/x", "/var/lib/x", "/opt/tool/x"}) {
    const Denial d = Explained(ViewPlan(), target);
    EXPECT_NE(d.rule.find("sandbox.writable_roots"), std::string::npos) << target;
    EXPECT_TRUE(d.fix.starts_with("by design")) << target << d.fix;
  }
  EXPECT_TRUE(Explained(ViewPlan(), "/planted").fix.starts_with("by design"));
  // A read-only home (not hidden: no view over it): neither the home nor above it is offered,
  // nor the home's own dot directories.
  LaunchPlan plan = ViewPlan();
  plan.mounts.erase(plan.mounts.begin() + 1);
  for (const char* target : {"/home/u/file", "/home/other", "/home/u/.cache/x/y"}) {
    const Denial d = Explained(plan, target);
    EXPECT_TRUE(d.fix.starts_with("by design")) << target << d.fix;
    EXPECT_EQ(d.fix.find("--writable-root"), std::string::npos) << target << d.fix;
  }
}

TEST(FileDenials, AnOrdinaryDirectoryIsOfferedAsAWritableRoot) {
  const Denial d = Explained(ViewPlan(), "/srv/data/out.csv");
  EXPECT_NE(d.fix.find("--writable-root /srv/data"), std::string::npos) << d.fix;
  const Denial project = Explained(ViewPlan(), "/home/u/other-project/build/x", "landlock");
  // Inside the hidden home the view refused it; Landlock's report of the same path is the
  // home's too.
  EXPECT_NE(project.rule.find("sandbox.home"), std::string::npos) << project.rule;
  LaunchPlan fallback;
  fallback.workspace = "/work/ws";
  fallback.landlock.writable = {"/work/ws"};
  const Denial landlock = Explained(fallback, "/home/u/other-project/build/x", "landlock");
  EXPECT_NE(landlock.fix.find("--writable-root /home/u/other-project/build"), std::string::npos)
      << landlock.fix;
}

TEST(FileDenials, OtherDenialsAndExplainedOnesAreLeftAlone) {
  std::vector<Denial> denials = {
      {"connect", "192.0.2.1:443", "network", "sandbox.network: deny", "fix"},
      {"create", "/etc/x", "mount view", "a rule", "a fix"},
      {"create", "relative", "mount view", "", ""}};
  const std::vector<Denial> before = denials;
  ExplainFileDenials(ViewPlan(), "/home/u", denials);
  EXPECT_EQ(denials, before);
}

}  // namespace
}  // namespace cordon::plan
