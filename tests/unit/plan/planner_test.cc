// Plan and DescribeCapabilities with fabricated kernel features: the fail-closed decisions.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "linux/system_headers/landlock.h"
#include "plan/launch_plan.h"
#include "plan/mount_ops.h"
#include "planner_fixture.h"

namespace cordon::plan {
namespace {

using namespace cordon::plan::plan_test;  // NOLINT(google-build-using-namespace)

TEST(Planner, ModeOffIsUnsandboxedAndKeepsTheCallersEnvironment) {
  Config config = Default();
  config.sandbox.mode = SandboxMode::kOff;
  auto plan = Plan(config, KernelFeatures{}, Request());  // nothing available: still fine
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->sandboxed);
  EXPECT_EQ(plan->enforcement.backend, "none");
  EXPECT_EQ(plan->env, Request().caller_env);
}

TEST(Planner, AFullKernelGetsEveryLayer) {
  auto plan = Plan(Default(), Everything(), Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->sandboxed);
  EXPECT_TRUE(plan->namespaces.user && plan->namespaces.mount && plan->namespaces.pid);
  EXPECT_TRUE(plan->namespaces.net);
  EXPECT_EQ(plan->landlock.abi, 7);
  EXPECT_EQ(plan->landlock.handled_net, 0u) << "the net namespace already denies TCP";
  EXPECT_NE(plan->landlock.scoped & linux_native::sys::kScopeSignal, 0u);
  EXPECT_EQ(plan->seccomp.sockets, SocketPolicy::kLocalFamilies);
  EXPECT_TRUE(plan->enforcement.filesystem);
  EXPECT_TRUE(plan->enforcement.network);
  EXPECT_FALSE(std::any_of(plan->env.begin(), plan->env.end(), [](const std::string& e) {
    return e.starts_with("CORDON_CANARY_SECRET=");
  }));
}

TEST(Planner, NetworkAllowCreatesNoNetNamespaceAndNoSocketFilter) {
  Config config = Default();
  config.sandbox.network = NetworkPolicy::kAllow;
  auto plan = Plan(config, Everything(), Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->namespaces.net);
  EXPECT_EQ(plan->seccomp.sockets, SocketPolicy::kAny);
  EXPECT_FALSE(plan->enforcement.network);
}

bool MasksRun(const LaunchPlan& plan) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(), [](const MountOp& op) {
    return op.kind == MountOpKind::kMaskDirectory && op.path == "/run";
  });
}

TEST(Planner, NetworkDenyHidesAllOfRunAndAllowHidesItsIpcButKeepsNameResolution) {
  auto denied = Plan(Default(), Everything(), Request());
  ASSERT_TRUE(denied) << denied.error().message;
  EXPECT_TRUE(MasksRun(*denied)) << "docker.sock, D-Bus and agents in /run must be hidden";
  Config config = Default();
  config.sandbox.network = NetworkPolicy::kAllow;
  auto allowed = Plan(config, Everything(), Request());
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_FALSE(MasksRun(*allowed)) << "resolv.conf may live in /run";
  auto masked = [&](const std::filesystem::path& p) {
    return std::any_of(allowed->mounts.begin(), allowed->mounts.end(),
                       [&](const MountOp& op) { return op.path == p; });
  };
  if (std::filesystem::exists("/run/user")) {
    EXPECT_TRUE(masked("/run/user"));
  }
  EXPECT_FALSE(masked("/run/systemd/resolve"));
}

TEST(Planner, NoNamespacesAndNoLandlockIsRefusedWithAFix) {
  KernelFeatures f = NoNamespaces(0);
  auto plan = Plan(Default(), f, Request());
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(Contains(plan.error().message, "user namespaces are unavailable"))
      << plan.error().message;
  EXPECT_TRUE(Contains(plan.error().message, "kernel.unprivileged_userns_clone=1"));
  EXPECT_TRUE(Contains(plan.error().message, "Landlock is unavailable"));
}

TEST(Planner, ReadOnlyModeAlsoNeedsFilesystemConfinement) {
  Config config = Default();
  config.sandbox.mode = SandboxMode::kReadOnly;
  EXPECT_FALSE(Plan(config, NoNamespaces(0), Request()));
  EXPECT_TRUE(Plan(config, Everything(), Request()));
}

TEST(Planner, NetworkDenyWithoutNetNamespaceNeedsLandlockTcp) {
  KernelFeatures f = Everything();
  f.net_namespace = false;
  f.landlock_abi = 3;
  auto refused = Plan(Default(), f, Request());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(Contains(refused.error().message, "network deny")) << refused.error().message;

  f.landlock_abi = 4;  // twin: Landlock TCP rules plus the socket-family filter suffice
  auto plan = Plan(Default(), f, Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->namespaces.net);
  EXPECT_NE(plan->landlock.handled_net, 0u);
  EXPECT_EQ(plan->seccomp.sockets, SocketPolicy::kUnixAndNetlink);
}

TEST(Planner, NetworkAllowNeedsNoNetworkLayer) {
  KernelFeatures f = Everything();
  f.net_namespace = false;
  f.landlock_abi = 0;
  Config config = Default();
  config.sandbox.network = NetworkPolicy::kAllow;
  EXPECT_TRUE(Plan(config, f, Request()));
  EXPECT_FALSE(Plan(Default(), f, Request()));  // twin: deny is refused on the same machine
}

TEST(Planner, MissingSeccompIsRefused) {
  KernelFeatures f = Everything();
  f.seccomp = false;
  auto plan = Plan(Default(), f, Request());
  ASSERT_FALSE(plan);
  EXPECT_TRUE(Contains(plan.error().message, "seccomp")) << plan.error().message;
}

TEST(Planner, LandlockRightsAreClampedToTheProbedAbi) {
  KernelFeatures f = Everything();
  f.landlock_abi = 1;
  auto plan = Plan(Default(), f, Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->landlock.handled_fs & linux_native::sys::kAccessFsRefer, 0u);
  EXPECT_EQ(plan->landlock.scoped, 0u);
  f.landlock_abi = 5;
  plan = Plan(Default(), f, Request());
  ASSERT_TRUE(plan);
  EXPECT_NE(plan->landlock.handled_fs & linux_native::sys::kAccessFsIoctlDev, 0u);
}

TEST(Planner, LandlockReadAllowListLeavesOutPresentAndAbsentSecrets) {
  // With namespaces the masks hide the secrets that exist; the read allow-list also keeps
  // unreadable the ones the host creates during the run (absent now: nothing to mask).
  char dir[] = "/tmp/cordon-plan-home-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path home = dir;
  std::filesystem::create_directories(home / ".ssh");
  std::filesystem::create_directories(home / "project");
  std::ofstream(home / ".bashrc") << "# rc\n";
  PlanRequest request = Request();
  request.caller_home = home;
  auto plan = Plan(Default(), Everything(), request);
  std::filesystem::remove_all(home);
  ASSERT_TRUE(plan) << plan.error().message;
  const auto& readable = plan->landlock.readable;
  auto has = [&](const std::filesystem::path& p) {
    return std::find(readable.begin(), readable.end(), p) != readable.end();
  };
  EXPECT_NE(plan->landlock.handled_fs & linux_native::sys::kAccessFsReadFile, 0u);
  EXPECT_TRUE(plan->landlock.list_root);
  EXPECT_TRUE(has(home / ".bashrc"));
  EXPECT_TRUE(has(home / "project"));
  EXPECT_TRUE(has("/usr"));
  EXPECT_FALSE(has(home / ".ssh"));  // present: masked, and out of the list
  EXPECT_FALSE(has(home / ".aws"));  // absent: would be unreadable if created
  EXPECT_FALSE(has(home));           // only its entries, one by one
}

TEST(Planner, NoReadRulesWithoutLandlock) {
  KernelFeatures f = Everything();
  f.landlock_abi = 0;
  auto plan = Plan(Default(), f, Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->landlock.readable.empty());
  EXPECT_EQ(plan->landlock.handled_fs, 0u);
}

TEST(Planner, WorkspaceIsWritableInWorkspaceWriteAndReadOnlyInReadOnly) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  PlanRequest request = Request();
  request.workspace = dir;
  auto writable = Plan(Default(), Everything(), request);
  ASSERT_TRUE(writable) << writable.error().message;
  auto has = [](const LaunchPlan& p, MountOpKind kind, const std::string& path) {
    return std::any_of(p.mounts.begin(), p.mounts.end(),
                       [&](const MountOp& op) { return op.kind == kind && op.path == path; });
  };
  EXPECT_TRUE(has(*writable, MountOpKind::kBindWritable, dir));
  EXPECT_TRUE(has(*writable, MountOpKind::kHomeView, "/tmp"));
  Config read_only = Default();
  read_only.sandbox.mode = SandboxMode::kReadOnly;
  auto ro = Plan(read_only, Everything(), request);
  ASSERT_TRUE(ro);
  EXPECT_FALSE(has(*ro, MountOpKind::kBindWritable, dir));
  EXPECT_TRUE(has(*ro, MountOpKind::kBindReadOnly, dir));
  ::rmdir(dir);
}

// A workspace below /tmp or /var/tmp: the area around it is an empty view, read-only once the
// workspace is bound into it, never a private tmpfs where a file moved to `..` vanishes with
// the run (decision 0046); with /tmp such a view, TMPDIR and HOME are a private tmpfs in it.
TEST(Planner, AnAreaThatHoldsTheWorkspaceIsAnEmptyViewWithTheScratchInside) {
  auto has = [](const LaunchPlan& p, MountOpKind kind, const std::string& path) {
    return std::any_of(p.mounts.begin(), p.mounts.end(),
                       [&](const MountOp& op) { return op.kind == kind && op.path == path; });
  };
  auto env_has = [](const LaunchPlan& p, const std::string& entry) {
    return std::find(p.env.begin(), p.env.end(), entry) != p.env.end();
  };
  for (const char* area : {"/tmp", "/var/tmp"}) {
    SCOPED_TRACE(area);
    std::string dir = std::string(area) + "/cordon-plan-XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    PlanRequest request = Request();
    request.workspace = dir;
    for (SandboxMode mode : {SandboxMode::kWorkspaceWrite, SandboxMode::kReadOnly}) {
      Config config = Default();
      config.sandbox.mode = mode;
      auto plan = Plan(config, Everything(), request);
      ASSERT_TRUE(plan) << plan.error().message;
      EXPECT_TRUE(has(*plan, MountOpKind::kHomeView, area));
      EXPECT_FALSE(has(*plan, MountOpKind::kTmpfs, area));
      const bool tmp = std::string(area) == "/tmp";
      EXPECT_EQ(plan->tmpdir, tmp ? kViewScratch : kPrivateTmp);
      EXPECT_EQ(plan->home, tmp ? kViewScratchHome : kPrivateHome);
      EXPECT_TRUE(has(*plan, MountOpKind::kTmpfs, tmp ? "/var/tmp" : "/tmp"));
      EXPECT_TRUE(env_has(*plan, "TMPDIR=" + plan->tmpdir.string()));
      EXPECT_TRUE(env_has(*plan, "HOME=" + plan->home.string()));
    }
    // Twin: without a mount namespace nothing is private there, and nothing a view.
    Config unprotected = Default();
    unprotected.sandbox.protect_git_metadata = false;
    unprotected.sandbox.protect_host_run_files = false;
    auto fallback = Plan(unprotected, NoNamespaces(7), request);
    ASSERT_TRUE(fallback) << fallback.error().message;
    EXPECT_FALSE(has(*fallback, MountOpKind::kHomeView, area));
    EXPECT_EQ(fallback->tmpdir, kPrivateTmp);
    ::rmdir(dir.c_str());
  }
  // Twin: a workspace elsewhere leaves both areas fresh private tmpfs mounts.
  auto elsewhere = Plan(Default(), Everything(), Request());
  ASSERT_TRUE(elsewhere) << elsewhere.error().message;
  EXPECT_TRUE(has(*elsewhere, MountOpKind::kTmpfs, "/tmp"));
  EXPECT_TRUE(has(*elsewhere, MountOpKind::kTmpfs, "/var/tmp"));
  EXPECT_FALSE(has(*elsewhere, MountOpKind::kHomeView, "/tmp"));
  EXPECT_EQ(elsewhere->home, kPrivateHome);
  EXPECT_EQ(elsewhere->tmpdir, kPrivateTmp);
}

TEST(Planner, GitMetadataInAWritableRootIsBoundReadOnly) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  std::string git = std::string(dir) + "/.git";
  ASSERT_EQ(::mkdir(git.c_str(), 0755), 0);
  PlanRequest request = Request();
  request.workspace = dir;
  auto plan = Plan(Default(), Everything(), request);
  ASSERT_TRUE(plan);
  auto ro_git = [&](const LaunchPlan& p) {
    return std::any_of(p.mounts.begin(), p.mounts.end(), [&](const MountOp& op) {
      return op.kind == MountOpKind::kBindReadOnly && op.path == git;
    });
  };
  EXPECT_TRUE(ro_git(*plan));
  Config unprotected = Default();
  unprotected.sandbox.protect_git_metadata = false;
  auto plain = Plan(unprotected, Everything(), request);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(ro_git(*plain));
  ::rmdir(git.c_str());
  ::rmdir(dir);
}

TEST(Planner, AMissingGitGetsAPlaceholderOnlyWhenGitMetadataIsProtected) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  PlanRequest request = Request();
  request.workspace = dir;
  auto plan = Plan(Default(), Everything(), request);
  ASSERT_TRUE(plan);
  // With a mount namespace: a placeholder for the command (never part of the shared view).
  auto git_placeholder = [&](const LaunchPlan& p) {
    return std::count(p.placeholders.begin(), p.placeholders.end(), Placeholder{dir, ".git", true});
  };
  EXPECT_EQ(git_placeholder(*plan), 1);
  EXPECT_TRUE(plan->absent_protected.empty());
  // Twins: an existing .git is not absent; unprotected, nothing is listed.
  const std::string git = std::string(dir) + "/.git";
  ASSERT_EQ(::mkdir(git.c_str(), 0755), 0);
  auto with_git = Plan(Default(), Everything(), request);
  ASSERT_TRUE(with_git);
  EXPECT_EQ(git_placeholder(*with_git), 0);
  // Another run's placeholder there is absent all the same: this run holds its own.
  ASSERT_EQ(::chmod(git.c_str(), kPlaceholderDirectoryMode), 0);
  auto with_placeholder = Plan(Default(), Everything(), request);
  ASSERT_TRUE(with_placeholder);
  EXPECT_EQ(git_placeholder(*with_placeholder), 1);
  ::rmdir(git.c_str());
  Config unprotected = Default();
  unprotected.sandbox.protect_git_metadata = false;
  auto plain = Plan(unprotected, Everything(), request);
  ASSERT_TRUE(plain);
  EXPECT_EQ(git_placeholder(*plain), 0);
  ::rmdir(dir);
}

TEST(Planner, AWorkspaceInsideAConfiguredRootKeepsItsGitReadOnly) {
  // The workspace is dropped as a separate bind (its parent root covers it), but its .git
  // must still be protected.
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path parent = dir;
  std::filesystem::create_directories(parent / "proj/.git");
  PlanRequest request = Request();
  request.workspace = parent / "proj";
  Config config = Default();
  config.sandbox.writable_roots = {parent};
  config.sandbox.home = HomeView::kReadOnly;  // no grants of the caller's toolchains
  auto plan = Plan(config, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  auto ro = [&](const std::filesystem::path& path) {
    return std::any_of(plan->mounts.begin(), plan->mounts.end(), [&](const MountOp& op) {
      return op.kind == MountOpKind::kBindReadOnly && op.path == path;
    });
  };
  EXPECT_TRUE(ro(parent / "proj/.git"));
  // Twin: with protection off, nothing is bound read-only.
  config.sandbox.protect_git_metadata = false;
  auto plain = Plan(config, Everything(), request);
  ASSERT_TRUE(plain);
  EXPECT_FALSE(std::any_of(plain->mounts.begin(), plain->mounts.end(), [](const MountOp& op) {
    return op.kind == MountOpKind::kBindReadOnly;
  }));
  std::filesystem::remove_all(parent);
}

TEST(Planner, AGitFileIsProtectedTogetherWithTheGitDirAndCommonDirItPointsTo) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path base = dir;
  // base/repo is a repository with a linked worktree at base/wt.
  std::filesystem::create_directories(base / "repo/.git/worktrees/wt");
  std::ofstream(base / "repo/.git/worktrees/wt/commondir") << "../..\n";
  std::ofstream(base / "repo/.git/worktrees/wt/HEAD") << "ref: refs/heads/wt\n";
  std::ofstream(base / "repo/.git/HEAD") << "ref: refs/heads/main\n";
  std::filesystem::create_directories(base / "wt");
  std::ofstream(base / "wt/.git") << "gitdir: ../repo/.git/worktrees/wt\n";
  EXPECT_EQ(GitMetadataPaths(base / "wt"),
            (std::vector<std::filesystem::path>{base / "wt/.git", base / "repo/.git/worktrees/wt",
                                                base / "repo/.git"}));
  EXPECT_TRUE(GitMetadataPaths(base / "repo/.git/worktrees").empty());  // no .git: nothing

  PlanRequest request = Request();
  request.workspace = base / "wt";
  Config config = Default();
  auto ro = [](const LaunchPlan& p, const std::filesystem::path& path) {
    return std::any_of(p.mounts.begin(), p.mounts.end(), [&](const MountOp& op) {
      return op.kind == MountOpKind::kBindReadOnly && op.path == path;
    });
  };
  auto only_worktree = Plan(config, Everything(), request);
  ASSERT_TRUE(only_worktree) << only_worktree.error().message;
  EXPECT_TRUE(ro(*only_worktree, base / "wt/.git"));
  // The main repository is not writable here at all: no extra mount for it.
  EXPECT_FALSE(ro(*only_worktree, base / "repo/.git"));
  // Twin: once the main repository is a writable root, its .git is bound read-only too.
  config.sandbox.writable_roots = {base / "repo"};
  auto both = Plan(config, Everything(), request);
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_TRUE(ro(*both, base / "repo/.git"));
  EXPECT_TRUE(ro(*both, base / "repo/.git/worktrees/wt"));
  std::filesystem::remove_all(base);
}

// A FIFO or /dev/zero planted where git keeps a pointer must neither hang the planner nor fill
// its memory: the reader takes only small regular files, without following a symlink.
TEST(Planner, ACwdOutsideTheWorkspaceIsRefused) {
  PlanRequest request = Request();
  request.workspace = "/usr";
  request.cwd = "/etc";
  auto plan = Plan(Default(), Everything(), request);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ErrorCode::kInvalidArgument);
  request.cwd = "/usr/bin";
  EXPECT_TRUE(Plan(Default(), Everything(), request));
}

TEST(Planner, AnEmptyCommandIsRefused) {
  PlanRequest request = Request();
  request.argv.clear();
  EXPECT_FALSE(Plan(Default(), Everything(), request));
}

TEST(Capabilities, MissingIsNonEmptyExactlyWhenPlanRefuses) {
  std::vector<KernelFeatures> machines = {Everything(), NoNamespaces(0), NoNamespaces(7)};
  KernelFeatures no_net = Everything();
  no_net.net_namespace = false;
  no_net.landlock_abi = 2;
  machines.push_back(no_net);
  for (SandboxMode mode :
       {SandboxMode::kOff, SandboxMode::kReadOnly, SandboxMode::kWorkspaceWrite}) {
    for (NetworkPolicy net : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
      for (const KernelFeatures& f : machines) {
        Config config;
        config.sandbox.mode = mode;
        config.sandbox.network = net;
        Capabilities caps = DescribeCapabilities(config, f);
        bool planned = Plan(config, f, Request()).has_value();
        EXPECT_EQ(caps.can_run(), planned)
            << SandboxModeName(mode) << " " << NetworkPolicyName(net);
        if (caps.can_run() && mode != SandboxMode::kOff) {
          EXPECT_TRUE(caps.filesystem_enforced);
          EXPECT_EQ(caps.network_enforced, net == NetworkPolicy::kDeny);
        }
      }
    }
  }
}

TEST(Capabilities, ReportsBackendLayersAndWhatIsNotSupported) {
  Capabilities caps = DescribeCapabilities(Default(), Everything());
  EXPECT_EQ(caps.backend, "native");
  EXPECT_TRUE(caps.enforcement.user_namespace);
  EXPECT_TRUE(caps.enforcement.seccomp);
  EXPECT_EQ(caps.enforcement.landlock_abi, 7);
  EXPECT_FALSE(caps.unsupported.empty());
  Config off = Default();
  off.sandbox.mode = SandboxMode::kOff;
  Capabilities none = DescribeCapabilities(off, Everything());
  EXPECT_EQ(none.backend, "none");
  EXPECT_FALSE(none.filesystem_enforced);
  EXPECT_FALSE(none.network_enforced);
}

TEST(Planner, RefusesABackendThisMachineCannotRun) {
  Config config = Default();
  config.sandbox.backend = BackendChoice::kSeatbelt;  // macOS only
  auto plan = Plan(config, Everything(), Request());
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("backend seatbelt"), std::string::npos)
      << plan.error().message;
  config.sandbox.backend = BackendChoice::kNative;  // twin
  EXPECT_TRUE(Plan(config, Everything(), Request()));
}

TEST(Planner, RefusesAResourceLimitThatIsNotEnforcedYet) {
  Config config = Default();
  config.limits.memory_bytes = 1 << 30;
  auto plan = Plan(config, Everything(), Request());
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("limits.memory_bytes"), std::string::npos);
  EXPECT_FALSE(DescribeCapabilities(config, Everything()).missing.empty());
  config.limits.memory_bytes = 0;  // twin: the default runs
  EXPECT_TRUE(Plan(config, Everything(), Request()));
}

}  // namespace
}  // namespace cordon::plan
