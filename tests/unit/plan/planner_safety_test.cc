// Plan's refusals and layers added by the security review (docs/decisions/0004-0006): writable
// roots that hold a home, cordon's own config directory, the Landlock-only fallback, IPC
// scoping, what status says about Landlock, and bounded .git pointer reads.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "linux/system_headers/landlock.h"
#include "plan/launch_plan.h"
#include "plan/mount_ops.h"
#include "planner_fixture.h"

namespace cordon::plan {
namespace {

using namespace cordon::plan::plan_test;  // NOLINT(google-build-using-namespace)

TEST(Planner, AWritableRootThatIsTheRootOrHoldsTheHomeIsRefusedAndOneBelowItIsNot) {
  PlanRequest request = Request();
  request.workspace = "/";
  auto root = Plan(Default(), Everything(), request);
  ASSERT_FALSE(root);
  EXPECT_TRUE(Contains(root.error().message, "root directory")) << root.error().message;
  request.workspace = "/usr";
  request.caller_home = "/usr";
  auto home = Plan(Default(), Everything(), request);
  ASSERT_FALSE(home);
  EXPECT_TRUE(Contains(home.error().message, "is the home directory")) << home.error().message;
  request.caller_home = "/usr/share";
  auto holds = Plan(Default(), Everything(), request);
  ASSERT_FALSE(holds);
  EXPECT_TRUE(Contains(holds.error().message, "contains the home directory"));
  Config configured = Default();
  configured.sandbox.writable_roots = {"/usr"};
  request.workspace = "/usr/share/doc";
  EXPECT_FALSE(Plan(configured, Everything(), request)) << "a configured root holding the home";
  EXPECT_TRUE(Plan(Default(), Everything(), request)) << "twin: a workspace below the home";
  Config read_only = Default();  // twin: reading the home in read_only mode is fine
  read_only.sandbox.mode = SandboxMode::kReadOnly;
  request.workspace = "/usr";
  request.caller_home = "/usr";
  EXPECT_TRUE(Plan(read_only, Everything(), request));
}

TEST(Planner, AWritableRootWhereCordonsOwnConfigCouldBeCreatedIsRefusedUntilItExists) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path home = dir;
  std::filesystem::create_directories(home / ".config");
  Config config = Default();
  config.sandbox.writable_roots = {home / ".config"};
  PlanRequest request = Request();
  request.caller_home = home;
  auto refused = Plan(config, Everything(), request);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "mkdir -p -m 700")) << refused.error().message;
  std::filesystem::create_directory(home / ".config" / "cordon");  // twin: it exists, is masked
  auto plan = Plan(config, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(std::any_of(plan->mounts.begin(), plan->mounts.end(), [&](const MountOp& op) {
    return op.kind == MountOpKind::kMaskDirectory && op.path == home / ".config" / "cordon";
  }));
  std::filesystem::remove_all(home);
}

// The config this process reads (XDG_CONFIG_HOME, --config: SandboxConfig::own_config) is never
// inside a writable root: absent (a command could create it, a missing parent too), present
// (it could be rewritten or replaced), or reached through a link that lies there. Outside every
// root it is masked wherever it is read from.
TEST(Planner, TheConfigActuallyReadIsNeverInsideAWritableRoot) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path workspace = dir;
  Config config = Default();
  config.sandbox.own_config = {workspace / "xdg" / "cordon"};
  PlanRequest request = Request();
  request.workspace = workspace;
  auto refused = Plan(config, Everything(), request);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, (workspace / "xdg" / "cordon").string()))
      << refused.error().message;
  std::filesystem::create_directories(workspace / "xdg" / "cordon");
  EXPECT_FALSE(Plan(config, Everything(), request)) << "present, inside the workspace";
  // A link in the workspace to a config outside it: the link could be replaced.
  // Outside: where the test runs (the build tree), which the sandbox's view shows unless it
  // lies below the private /tmp or /var/tmp.
  std::string outside_dir =
      (std::filesystem::current_path() / "cordon-plan-config-XXXXXX").string();
  ASSERT_NE(::mkdtemp(outside_dir.data()), nullptr);
  const std::filesystem::path outside = std::filesystem::canonical(outside_dir);
  const bool in_view =
      !outside.string().starts_with("/tmp/") && !outside.string().starts_with("/var/tmp/");
  std::filesystem::create_directories(outside / "cordon");
  std::filesystem::create_directory_symlink(outside, workspace / "link");
  config.sandbox.own_config = {workspace / "link" / "cordon"};
  EXPECT_FALSE(Plan(config, Everything(), request)) << "reached through a link in the workspace";
  // Twin: the same config named outside every writable root is planned, and masked.
  config.sandbox.own_config = {outside / "cordon"};
  request.workspace = "/usr";
  auto plan = Plan(config, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  const bool masked = std::any_of(plan->mounts.begin(), plan->mounts.end(), [&](const MountOp& op) {
    return op.kind == MountOpKind::kMaskDirectory && op.path == outside / "cordon";
  });
  EXPECT_EQ(masked, in_view) << outside;
  std::filesystem::remove_all(workspace);
  std::filesystem::remove_all(outside);
}

TEST(Planner, WithoutNamespacesTheFallbackPlansLandlockReadsAndRefusesGitAndHostRunProtection) {
  Config config = Default();
  auto refused = Plan(config, NoNamespaces(7), Request());
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "protect_git_metadata")) << refused.error().message;
  EXPECT_TRUE(Contains(refused.error().message, "protect_host_run_files"))
      << refused.error().message;
  config.sandbox.protect_git_metadata = false;
  EXPECT_FALSE(Plan(config, NoNamespaces(7), Request()));  // still the host-run files
  config.sandbox.protect_host_run_files = false;
  auto plan = Plan(config, NoNamespaces(7), Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->namespaces.user);
  EXPECT_TRUE(plan->mounts.empty());
  EXPECT_NE(plan->landlock.handled_fs & linux_native::sys::kAccessFsReadFile, 0u);
  EXPECT_FALSE(plan->landlock.readable.empty());
  EXPECT_TRUE(plan->landlock.list_root);
  EXPECT_EQ(plan->seccomp.sockets, SocketPolicy::kUnixAndNetlink);
  EXPECT_TRUE(plan->seccomp.refuse_unix_sockets) << "ABI < 9: host sockets are reachable";
  EXPECT_NE(plan->landlock.handled_net, 0u);
  KernelFeatures abi9 = NoNamespaces(9);  // twin: Landlock ABI 9 handles socket connects
  auto plan9 = Plan(config, abi9, Request());
  ASSERT_TRUE(plan9) << plan9.error().message;
  EXPECT_FALSE(plan9->seccomp.refuse_unix_sockets);
  EXPECT_NE(plan9->landlock.handled_fs & linux_native::sys::kAccessFsResolveUnix, 0u);
  // Inside another brokering sandbox its broker would connect outside this run's Landlock
  // domain: refused again, whatever the ABI.
  KernelFeatures nested = NoNamespaces(9);
  nested.seccomp_listener = false;
  auto plan_nested = Plan(config, nested, Request());
  ASSERT_TRUE(plan_nested) << plan_nested.error().message;
  EXPECT_TRUE(plan_nested->seccomp.refuse_unix_sockets);
}

TEST(Planner, AbstractSocketsAreScopedWhateverTheNetworkSetting) {
  Config config = Default();
  config.sandbox.network = NetworkPolicy::kAllow;
  auto plan = Plan(config, Everything(), Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_NE(plan->landlock.scoped & linux_native::sys::kScopeAbstractUnixSocket, 0u);
  EXPECT_TRUE(plan->seccomp.refuse_setid_modes);
}

TEST(Capabilities, StatusSaysWhenLandlockIsAbsentUnderNamespaces) {
  KernelFeatures f = Everything();
  f.landlock_abi = 0;
  Capabilities caps = DescribeCapabilities(Default(), f);
  EXPECT_TRUE(caps.can_run());
  EXPECT_EQ(caps.enforcement.landlock_abi, 0);
  EXPECT_TRUE(Contains(caps.backend_reason, "Landlock is absent")) << caps.backend_reason;
  Capabilities with = DescribeCapabilities(Default(), Everything());
  EXPECT_TRUE(Contains(with.backend_reason, "Landlock ABI 7")) << with.backend_reason;
}

TEST(Planner, GitPointerFilesThatAreFifosOrDevicesAreIgnoredAtOnce) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path base = dir;
  std::filesystem::create_directories(base / "gitdir");
  std::ofstream(base / "gitdir/HEAD") << "ref: refs/heads/main\n";
  std::filesystem::create_directories(base / "wt");
  std::ofstream(base / "wt/.git") << "gitdir: ../gitdir\n";
  ASSERT_EQ(::mkfifo((base / "gitdir/commondir").c_str(), 0600), 0);
  EXPECT_EQ(GitMetadataPaths(base / "wt"),
            (std::vector<std::filesystem::path>{base / "wt/.git", base / "gitdir"}));
  std::filesystem::remove(base / "gitdir/commondir");
  std::filesystem::create_symlink("/dev/zero", base / "gitdir/commondir");
  EXPECT_EQ(GitMetadataPaths(base / "wt").size(), 2u);
  std::filesystem::remove(base / "wt/.git");
  std::filesystem::create_symlink("/dev/zero", base / "wt/.git");
  EXPECT_TRUE(GitMetadataPaths(base / "wt").empty());
  std::filesystem::remove(base / "wt/.git");
  ASSERT_EQ(::mkfifo((base / "wt/.git").c_str(), 0600), 0);
  EXPECT_TRUE(GitMetadataPaths(base / "wt").empty());
  std::filesystem::remove(base / "wt/.git");
  std::ofstream(base / "wt/.git") << "gitdir: ../gitdir\n" << std::string(8192, '#');
  EXPECT_EQ(GitMetadataPaths(base / "wt"), std::vector<std::filesystem::path>{base / "wt/.git"})
      << "an oversized pointer is not followed, the file itself stays protected";
  std::filesystem::remove_all(base);
}

// A .git file is followed only to a git directory (one with a HEAD: git uses no other, so no
// hook of another runs), and one that contains its own project refuses: read-only it would
// freeze the whole project (a command's way to stop every later one from writing), writable
// its hooks would be the command's. The twins: a git directory beside the project is
// protected, and a .git file naming no git directory protects only itself.
TEST(Planner, AGitFileNamingItsOwnProjectRefusesAndOneNamingNoGitDirectoryIsNotFollowed) {
  char dir[] = "/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path base = dir;
  std::filesystem::create_directories(base / "ws/sub");
  std::ofstream(base / "ws/sub/.git") << "gitdir: ..\n";
  EXPECT_EQ(GitMetadataPaths(base / "ws/sub"),
            std::vector<std::filesystem::path>{base / "ws/sub/.git"});
  EXPECT_EQ(GitDirProblem(base / "ws/sub"), "");
  std::ofstream(base / "ws/HEAD") << "ref: refs/heads/main\n";
  const std::string problem = GitDirProblem(base / "ws/sub");
  EXPECT_TRUE(
      Contains(problem, (base / "ws/sub").string() + "/.git names " + (base / "ws").string()))
      << problem;
  PlanRequest request = Request();
  request.workspace = base / "ws/sub";
  auto refused = Plan(Default(), Everything(), request);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "gitdir:")) << refused.error().message;
  std::filesystem::create_directories(base / "meta");
  std::ofstream(base / "meta/HEAD") << "ref: refs/heads/main\n";
  std::ofstream(base / "ws/sub/.git") << "gitdir: ../../meta\n";
  EXPECT_EQ(GitDirProblem(base / "ws/sub"), "");
  EXPECT_EQ(GitMetadataPaths(base / "ws/sub"),
            (std::vector<std::filesystem::path>{base / "ws/sub/.git", base / "meta"}));
  EXPECT_TRUE(Plan(Default(), Everything(), request).has_value());
  std::filesystem::remove_all(base);
}

// A writable root inside a repository's git metadata — a separate git directory outside the
// workspace (git clone --separate-git-dir), or the workspace's own .git — is refused with the
// reason: bound writable, its hooks would be the command's. The twin: a writable root beside
// the git directory is planned.
TEST(Planner, AWritableRootInsideGitMetadataIsRefused) {
  char dir[] = "/var/tmp/cordon-plan-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path base = dir;
  std::filesystem::create_directories(base / "gitdirs/lib/hooks");
  std::ofstream(base / "gitdirs/lib/HEAD") << "ref: refs/heads/main\n";
  std::filesystem::create_directories(base / "ws");
  std::ofstream(base / "ws/.git") << "gitdir: ../gitdirs/lib\n";
  std::filesystem::create_directories(base / "beside");
  PlanRequest request = Request();
  request.workspace = base / "ws";
  for (const std::filesystem::path& inside : {base / "gitdirs/lib/hooks", base / "gitdirs/lib"}) {
    Config config = Default();
    config.sandbox.writable_roots = {inside};
    auto refused = Plan(config, Everything(), request);
    ASSERT_FALSE(refused) << inside;
    EXPECT_TRUE(Contains(refused.error().message, "lies in the git metadata"))
        << refused.error().message;
  }
  Config config = Default();
  config.sandbox.writable_roots = {base / "beside"};
  auto planned = Plan(config, Everything(), request);
  EXPECT_TRUE(planned.has_value()) << planned.error().message;
  std::filesystem::remove_all(base);
}

// sandbox.home "hidden" needs a view to hide the homes in: without a mount namespace (the
// Landlock-only fallback) the run is refused saying so, never run with the home visible. The
// twin: with one, the plan has the view first.
TEST(Planner, AHiddenHomeWithoutAMountNamespaceRefusesTheRun) {
  char dir[] = "/var/tmp/cordon-plan-home-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path home = std::filesystem::canonical(dir);
  std::filesystem::create_directories(home / "proj");
  Config config = Default();
  config.sandbox.home = HomeView::kHidden;
  config.sandbox.protect_git_metadata = config.sandbox.protect_host_run_files = false;
  PlanRequest request = Request();
  request.workspace = home / "proj";
  request.caller_home = home;
  auto refused = Plan(config, NoNamespaces(7), request);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "sandbox.home \"hidden\" needs a mount namespace"))
      << refused.error().message;
  auto planned = Plan(config, Everything(), request);
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_FALSE(planned->mounts.empty());
  EXPECT_EQ(planned->mounts.front().kind, MountOpKind::kHomeView);
  std::filesystem::remove_all(home);
}

// The default, "auto": the homes hidden where the sandbox has a mount namespace; where it has
// none, read-only and said so in the capabilities, not refused (it was not asked for by name).
TEST(Planner, TheDefaultHidesTheHomeWhereItCanAndSaysSoWhereItCannot) {
  char dir[] = "/var/tmp/cordon-plan-home-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::filesystem::path home = std::filesystem::canonical(dir);
  std::filesystem::create_directories(home / "proj");
  Config config = Default();
  ASSERT_EQ(config.sandbox.home, HomeView::kAuto);
  config.sandbox.protect_git_metadata = config.sandbox.protect_host_run_files = false;
  PlanRequest request = Request();
  request.workspace = home / "proj";
  request.caller_home = home;
  auto hidden = Plan(config, Everything(), request);
  ASSERT_TRUE(hidden) << hidden.error().message;
  ASSERT_FALSE(hidden->mounts.empty());
  EXPECT_EQ(hidden->mounts.front().kind, MountOpKind::kHomeView);
  EXPECT_EQ(DescribeCapabilities(config, Everything()).home, HomeView::kHidden);

  auto read_only = Plan(config, NoNamespaces(7), request);
  ASSERT_TRUE(read_only) << read_only.error().message;
  EXPECT_TRUE(std::none_of(read_only->mounts.begin(), read_only->mounts.end(),
                           [](const MountOp& op) { return op.kind == MountOpKind::kHomeView; }));
  const Capabilities caps = DescribeCapabilities(config, NoNamespaces(7));
  EXPECT_EQ(caps.home, HomeView::kReadOnly);
  EXPECT_TRUE(std::any_of(caps.unsupported.begin(), caps.unsupported.end(), [](const auto& u) {
    return Contains(u, "the real homes are read-only, not hidden");
  }));
  std::filesystem::remove_all(home);
}

// What the command is told (CORDON_SANDBOX_HOME) is what it sees: read_only mode may run in the
// home itself, which the view then shows whole — "read_only", not "hidden". The twin: a
// project below the home is told "hidden".
TEST(Planner, TheHomeTheCommandIsToldOfIsTheOneItSees) {
  char dir[] = "/var/lib/cordon-plan-home-XXXXXX";
  if (::mkdtemp(dir) == nullptr) GTEST_SKIP() << "cannot make a home in /var/lib";
  const std::filesystem::path home = std::filesystem::canonical(dir);
  std::filesystem::create_directories(home / "proj");
  Config config = Default();
  config.sandbox.mode = SandboxMode::kReadOnly;
  PlanRequest request = Request();
  request.caller_home = home;
  auto told = [&](const std::filesystem::path& workspace) {
    request.workspace = workspace;
    auto plan = Plan(config, Everything(), request);
    EXPECT_TRUE(plan) << plan.error().message;
    if (!plan) return std::string();
    for (const std::string& entry : plan->env) {
      if (entry.starts_with("CORDON_SANDBOX_HOME=")) return entry.substr(20);
    }
    return std::string("unset");
  };
  EXPECT_EQ(told(home), "read_only");
  EXPECT_EQ(told(home / "proj"), "hidden");
  std::filesystem::remove_all(home);
}

}  // namespace
}  // namespace cordon::plan
