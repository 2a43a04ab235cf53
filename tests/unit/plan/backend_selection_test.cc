// The backend choice (docs/decisions/0018) with fabricated kernel features and bwrap probes:
// which backend runs, what status says, and what is refused.
#include "plan/backend_selection.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "plan/launch_plan.h"
#include "planner_fixture.h"

namespace cordon::plan {
namespace {

using namespace cordon::plan::plan_test;  // NOLINT(google-build-using-namespace)

BackendProbes UsableBwrap(bool setuid) {
  BackendProbes p;
  p.bwrap = BwrapProbe{.probed = true,
                       .usable = true,
                       .setuid = setuid,
                       .detail = "bubblewrap 0.8.0 at /usr/bin/bwrap"};
  return p;
}

BackendProbes MissingBwrap() {
  BackendProbes p;
  p.bwrap = BwrapProbe{.probed = true,
                       .usable = false,
                       .setuid = false,
                       .detail = "bubblewrap not found (install it: apt install bubblewrap)"};
  return p;
}

Config WithBackend(BackendChoice backend) {
  Config config = Default();
  config.sandbox.backend = backend;
  return config;
}

TEST(BackendSelection, AutoPicksNativeWhereItsNamespacesWorkAndProbesNoBwrap) {
  EXPECT_FALSE(NeedsBwrapProbe(Default(), Everything()));
  auto plan = Plan(Default(), Everything(), Request(), UsableBwrap(false));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "native");
  const Capabilities caps = DescribeCapabilities(Default(), Everything());
  EXPECT_EQ(caps.backend, "native");
  EXPECT_TRUE(Contains(caps.backend_reason, "chosen by auto")) << caps.backend_reason;
}

TEST(BackendSelection, AutoPrefersAWorkingBwrapToTheLandlockOnlyFallback) {
  EXPECT_TRUE(NeedsBwrapProbe(Default(), NoNamespaces(7)));
  auto plan = Plan(Default(), NoNamespaces(7), Request(), UsableBwrap(true));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "bwrap");
  // setuid bwrap without unprivileged user namespaces: mount, PID, net, no user namespace.
  EXPECT_FALSE(plan->namespaces.user);
  EXPECT_TRUE(plan->namespaces.mount && plan->namespaces.pid && plan->namespaces.net);
  EXPECT_FALSE(plan->mounts.empty()) << "the mount view, .git protection included";
  EXPECT_TRUE(plan->seccomp.enabled);
  EXPECT_EQ(plan->landlock.abi, 7);
  const Capabilities caps = DescribeCapabilities(Default(), NoNamespaces(7), UsableBwrap(true));
  EXPECT_EQ(caps.backend, "bwrap");
  EXPECT_TRUE(Contains(caps.backend_reason, "setuid")) << caps.backend_reason;
  EXPECT_TRUE(Contains(caps.backend_reason, "chosen by auto")) << caps.backend_reason;
}

TEST(BackendSelection, AutoWithoutBwrapFallsBackToLandlockOnlyNamingWhyBwrapCannotHelp) {
  Config config = Default();
  // The fallback cannot keep .git or the host-run files read-only.
  config.sandbox.protect_git_metadata = false;
  config.sandbox.protect_host_run_files = false;
  auto plan = Plan(config, NoNamespaces(7), Request(), MissingBwrap());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "native");
  EXPECT_FALSE(plan->namespaces.mount);
  const Capabilities caps = DescribeCapabilities(config, NoNamespaces(7), MissingBwrap());
  EXPECT_TRUE(Contains(caps.backend_reason, "fallback")) << caps.backend_reason;
  EXPECT_TRUE(Contains(caps.backend_reason, "bubblewrap not found")) << caps.backend_reason;
}

TEST(BackendSelection, ConfiguredBwrapRunsWhenUsableAndIsRefusedNamingTheFixWhenNot) {
  const Config config = WithBackend(BackendChoice::kBwrap);
  EXPECT_TRUE(NeedsBwrapProbe(config, Everything()));
  auto plan = Plan(config, Everything(), Request(), UsableBwrap(false));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "bwrap");
  EXPECT_TRUE(plan->namespaces.user);
  // Twin: bwrap missing refuses the run (no silent native), with the install hint.
  auto refused = Plan(config, Everything(), Request(), MissingBwrap());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(Contains(refused.error().message, "apt install bubblewrap"))
      << refused.error().message;
  // Not probed at all (a caller that skipped ProbeBackends) is refused too.
  EXPECT_FALSE(Plan(config, Everything(), Request()));
}

TEST(BackendSelection, ConfiguredNativeNeverTurnsIntoBwrap) {
  const Config config = WithBackend(BackendChoice::kNative);
  EXPECT_FALSE(NeedsBwrapProbe(config, NoNamespaces(7)));
  auto plan = Plan(config, NoNamespaces(7), Request(), UsableBwrap(true));
  EXPECT_FALSE(plan) << "native without namespaces refuses .git protection";
  const Capabilities caps = DescribeCapabilities(config, NoNamespaces(7), UsableBwrap(true));
  EXPECT_EQ(caps.backend, "native");
}

TEST(BackendSelection, BwrapRefusesAResourceLimitAndRunsWithoutOne) {
  Config config = WithBackend(BackendChoice::kBwrap);
  config.limits.processes = 64;
  const Capabilities caps = DescribeCapabilities(config, Everything(), UsableBwrap(false));
  ASSERT_FALSE(caps.can_run());
  EXPECT_TRUE(std::any_of(caps.missing.begin(), caps.missing.end(), [](const std::string& m) {
    return Contains(m, "bwrap backend does not enforce resource limits");
  }));
  config.limits.processes = 0;  // twin
  EXPECT_TRUE(DescribeCapabilities(config, Everything(), UsableBwrap(false)).can_run());
}

TEST(BackendSelection, SeatbeltIsRefusedOnLinux) {
  const Config config = WithBackend(BackendChoice::kSeatbelt);
  EXPECT_FALSE(NeedsBwrapProbe(config, Everything()));
  auto plan = Plan(config, Everything(), Request());
  ASSERT_FALSE(plan);
  EXPECT_TRUE(Contains(plan.error().message, "macOS")) << plan.error().message;
  const Capabilities caps = DescribeCapabilities(config, Everything());
  EXPECT_EQ(caps.backend, "seatbelt");
  EXPECT_FALSE(caps.backend_reason.empty());
}

// macOS as the session sees it (fabricated here, on Linux): Seatbelt exists and was probed.
BackendProbes MacSeatbelt(bool usable) {
  BackendProbes p;
  p.seatbelt = SeatbeltProbe{
      .platform = true,
      .probed = true,
      .usable = usable,
      .detail = usable ? "sandbox-exec at /usr/bin/sandbox-exec enforces a test profile"
                       : "/usr/bin/sandbox-exec ran but did not enforce a denied write"};
  return p;
}

TEST(BackendSelection, SeatbeltRunsWherePresentAndEnforcingWithPathRulesAndNoNamespaces) {
  const Config config = WithBackend(BackendChoice::kSeatbelt);
  EXPECT_TRUE(NeedsSeatbeltProbe(config));
  auto plan = Plan(config, NoNamespaces(0), Request(), MacSeatbelt(true));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "seatbelt");
  EXPECT_TRUE(plan->enforcement.filesystem && plan->enforcement.network);
  EXPECT_FALSE(plan->enforcement.mount_namespace || plan->enforcement.pid_namespace ||
               plan->enforcement.seccomp || plan->enforcement.landlock_abi != 0);
  EXPECT_FALSE(plan->namespaces.mount || plan->namespaces.pid);
  // The mount view's operations become the profile's path rules: the workspace is writable.
  EXPECT_TRUE(std::any_of(plan->mounts.begin(), plan->mounts.end(), [](const MountOp& op) {
    return op.kind == MountOpKind::kBindWritable && op.path == "/usr";
  }));
  EXPECT_NE(plan->seccomp.sockets, SocketPolicy::kAny);  // network deny reaches the profile
  const Capabilities caps = DescribeCapabilities(config, NoNamespaces(0), MacSeatbelt(true));
  EXPECT_EQ(caps.backend, "seatbelt");
  EXPECT_TRUE(caps.can_run());
  EXPECT_TRUE(Contains(caps.backend_reason, "configured: sandbox-exec at")) << caps.backend_reason;
  EXPECT_TRUE(std::any_of(caps.unsupported.begin(), caps.unsupported.end(),
                          [](const auto& u) { return Contains(u, "not yet verified on a Mac"); }));
}

TEST(BackendSelection, SeatbeltDeniesCredentialPathsThatDoNotExistYetByName) {
  // A home with ~/.ssh and no ~/.aws: the profile must deny ~/.aws too, for the host may create
  // it while the command runs (Seatbelt rules hold for paths that do not exist).
  char pattern[] = "/tmp/cordon-sb-home-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path home = std::filesystem::canonical(pattern);
  std::filesystem::create_directories(home / ".ssh");
  std::ofstream(home / ".ssh" / "id_ed25519") << "secret";
  Config config = WithBackend(BackendChoice::kSeatbelt);
  config.sandbox.home = HomeView::kReadOnly;  // Seatbelt has no hidden home view
  PlanRequest request = Request();
  request.caller_home = home;
  auto plan = Plan(config, NoNamespaces(0), request, MacSeatbelt(true));
  ASSERT_TRUE(plan) << plan.error().message;
  auto has = [](const std::vector<std::filesystem::path>& list, const std::filesystem::path& p) {
    return std::find(list.begin(), list.end(), p) != list.end();
  };
  EXPECT_TRUE(has(plan->absent_hidden, home / ".aws"));
  EXPECT_TRUE(has(plan->absent_hidden, home / ".config/gh"));
  EXPECT_FALSE(has(plan->absent_hidden, home / ".ssh")) << "present: masked, not absent";
  // Twin: with a mount namespace the list stays empty (Landlock's read list leaves them out).
  config.sandbox.backend = BackendChoice::kAuto;
  auto native = Plan(config, Everything(), request);
  ASSERT_TRUE(native) << native.error().message;
  EXPECT_TRUE(native->absent_hidden.empty());
  std::filesystem::remove_all(home);
}

TEST(BackendSelection, SeatbeltHidesTheHomeByDefaultWithItsGrants) {
  char pattern[] = "/var/lib/cordon-sb-home-XXXXXX";  // a home outside the private /tmp
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::filesystem::path home = std::filesystem::canonical(pattern);
  std::filesystem::create_directories(home / ".cargo/bin");
  std::filesystem::create_directories(home / "proj");
  Config config = WithBackend(BackendChoice::kSeatbelt);  // sandbox.home "auto"
  PlanRequest request = Request();
  request.caller_home = home;
  request.workspace = home / "proj";
  auto plan = Plan(config, NoNamespaces(0), request, MacSeatbelt(true));
  ASSERT_TRUE(plan) << plan.error().message;
  auto has = [&](MountOpKind kind, const std::filesystem::path& path) {
    return std::any_of(plan->mounts.begin(), plan->mounts.end(),
                       [&](const MountOp& op) { return op.kind == kind && op.path == path; });
  };
  EXPECT_TRUE(has(MountOpKind::kHomeView, home));
  EXPECT_TRUE(has(MountOpKind::kBindReadOnly, home / ".cargo/bin"));
  EXPECT_TRUE(has(MountOpKind::kBindWritable, home / "proj"));
  const Capabilities caps = DescribeCapabilities(config, NoNamespaces(0), MacSeatbelt(true));
  EXPECT_TRUE(caps.can_run());
  EXPECT_EQ(caps.home, HomeView::kHidden);
  EXPECT_TRUE(std::any_of(caps.unsupported.begin(), caps.unsupported.end(), [](const auto& u) {
    return Contains(u, "hidden home is denied by path");
  }));
  // Twin: sandbox.home "read_only" keeps the home visible (no view), said as a gap.
  config.sandbox.home = HomeView::kReadOnly;
  auto visible = Plan(config, NoNamespaces(0), request, MacSeatbelt(true));
  ASSERT_TRUE(visible) << visible.error().message;
  EXPECT_FALSE(std::any_of(visible->mounts.begin(), visible->mounts.end(),
                           [](const MountOp& op) { return op.kind == MountOpKind::kHomeView; }));
  std::filesystem::remove_all(home);
}

TEST(BackendSelection, SeatbeltFailsClosedWhenSandboxExecDoesNotEnforce) {
  const Config config = WithBackend(BackendChoice::kSeatbelt);
  auto plan = Plan(config, NoNamespaces(0), Request(), MacSeatbelt(false));
  ASSERT_FALSE(plan);
  EXPECT_TRUE(Contains(plan.error().message, "did not enforce")) << plan.error().message;
  EXPECT_TRUE(Contains(plan.error().message, "fix:")) << plan.error().message;
  const Capabilities caps = DescribeCapabilities(config, NoNamespaces(0), MacSeatbelt(false));
  EXPECT_EQ(caps.backend, "seatbelt");
  EXPECT_FALSE(caps.can_run());
  EXPECT_FALSE(caps.filesystem_enforced);
}

TEST(BackendSelection, AutoOnMacOSPicksSeatbeltOrRefusesNamingWhatIsMissing) {
  EXPECT_TRUE(NeedsSeatbeltProbe(Default()));
  auto plan = Plan(Default(), NoNamespaces(0), Request(), MacSeatbelt(true));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "seatbelt");
  const Capabilities caps = DescribeCapabilities(Default(), NoNamespaces(0), MacSeatbelt(true));
  EXPECT_TRUE(Contains(caps.backend_reason, "chosen by auto")) << caps.backend_reason;
  // Twin: sandbox-exec does not enforce: auto does not fall back to running unconfined.
  auto refused = Plan(Default(), NoNamespaces(0), Request(), MacSeatbelt(false));
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "backend seatbelt")) << refused.error().message;
}

TEST(BackendSelection, AutoKeepsNativeOnLinuxEvenWhereSeatbeltIsFabricated) {
  auto plan = Plan(Default(), Everything(), Request(), MacSeatbelt(true));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "native");
}

TEST(BackendSelection, SeatbeltRefusesAMemoryLimitWhereNothingEnforcesIt) {
  Config config = WithBackend(BackendChoice::kSeatbelt);
  config.limits.memory_bytes = 1 << 30;
  EXPECT_FALSE(DescribeCapabilities(config, NoNamespaces(0), MacSeatbelt(true)).can_run());
  config.limits.memory_bytes = 0;  // twin
  EXPECT_TRUE(DescribeCapabilities(config, NoNamespaces(0), MacSeatbelt(true)).can_run());
}

TEST(BackendSelection, ModeOffProbesNothingAndRunsUnsandboxed) {
  Config config = WithBackend(BackendChoice::kBwrap);
  config.sandbox.mode = SandboxMode::kOff;
  EXPECT_FALSE(NeedsBwrapProbe(config, Everything()));
  EXPECT_FALSE(NeedsSeatbeltProbe(config));
  auto plan = Plan(config, Everything(), Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->enforcement.backend, "none");
}

}  // namespace
}  // namespace cordon::plan
