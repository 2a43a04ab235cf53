// Network deny: nothing the command does reaches a listener the test opens on the host (TCP on
// 127.0.0.1, an abstract unix socket); the sandbox's own loopback still works. Network allow is
// the twin. Connections are checked on the host side (accept), not only by what the probe says.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using NetworkTest = ProbeTest;

TEST_F(NetworkTest, HostLoopbackListenerSeesNoConnectionWithNetworkDeny) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  HostListener listener = HostListener::Tcp();
  const RunResult result = Probe(*session, "connect-tcp 127.0.0.1 " + listener.address());
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
  EXPECT_FALSE(listener.Reached());
  EXPECT_TRUE(result.enforcement.network);
}

TEST_F(NetworkTest, HostLoopbackListenerSeesTheConnectionWithNetworkAllow) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!session) return;
  HostListener listener = HostListener::Tcp();
  const RunResult result = Probe(*session, "connect-tcp 127.0.0.1 " + listener.address());
  EXPECT_EQ(result.stdout_data.data, "ok\n") << Describe(result);
  EXPECT_TRUE(listener.Reached());
  EXPECT_FALSE(result.enforcement.network);
}

TEST_F(NetworkTest, SandboxsOwnLoopbackWorksWithNetworkDeny) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult result = Probe(*session, "loopback-echo");
  EXPECT_EQ(result.stdout_data.data, "ok\n") << Describe(result);
}

TEST_F(NetworkTest, HostAbstractSocketIsUnreachableWithNetworkDeny) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  HostListener listener = HostListener::Abstract("cordon-kernel-" + unique_);
  const RunResult result = Probe(*session, "connect-abstract " + listener.address());
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
  EXPECT_FALSE(listener.Reached());
}

// Host-local IPC is not "the network": with network allow the host's abstract sockets (X11,
// D-Bus) stay out of reach where Landlock scopes them (ABI >= 6; docs/decisions/0004), while
// an abstract socket the command makes itself works.
TEST_F(NetworkTest, HostAbstractSocketIsUnreachableWithNetworkAllowButTheCommandsOwnWorks) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!session) return;
  if (session->GetCapabilities().enforcement.landlock_abi < 6) {
    GTEST_SKIP() << "Landlock ABI < 6: abstract sockets are only isolated with network deny";
  }
  HostListener listener = HostListener::Abstract("cordon-kernel-" + unique_);
  const RunResult result = Probe(*session, "connect-abstract " + listener.address());
  EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
  EXPECT_FALSE(listener.Reached());
  const RunResult own = Probe(*session, "abstract-echo cordon-own-" + unique_);
  EXPECT_EQ(own.stdout_data.data, "ok\n") << Describe(own);
}

// A host service on a pathname socket (docker.sock, the D-Bus or ssh-agent socket) outside the
// workspace but visible in the read-only host view. /run/lock is world-writable on Debian, so
// the test needs no root to put a socket there.
// A network namespace does not cover pathname sockets, a read-only mount does not stop
// connect(), and Landlock (ABI <= 7) has no right for it: with network deny the plan masks the
// host's /run. Sockets elsewhere on the host are the gap `cordon status` reports.
TEST_F(NetworkTest, HostPathnameSocketInRunIsUnreachableWithNetworkDeny) {
  if (::access("/run/lock", W_OK) != 0) GTEST_SKIP() << "/run/lock is not writable here";
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  HostListener listener = HostListener::Pathname("/run/lock/" + unique_ + ".sock");
  const RunResult result = Probe(*session, "connect-unix " + listener.address());
  EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
  EXPECT_FALSE(listener.Reached());
}

TEST_F(NetworkTest, HostPathnameSocketInRunIsUnreachableWithNetworkAllowToo) {
  if (::access("/run/lock", W_OK) != 0) GTEST_SKIP() << "/run/lock is not writable here";
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!session) return;
  HostListener listener = HostListener::Pathname("/run/lock/" + unique_ + ".sock");
  const RunResult result = Probe(*session, "connect-unix " + listener.address());
  EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
  EXPECT_FALSE(listener.Reached());
}

// A root caller's host may have a listening socket in a directory of another user's that only
// its owner may search (a database's, say). The sandbox's root cannot look the path up either,
// so it is not masked — before, masking it failed and refused every run of a root caller.
// The command still cannot reach it; the twin, mode off (the host's root), does.
TEST_F(NetworkTest, ARootCallersSocketInAnotherUsersPrivateDirectoryIsNeitherReachedNorInTheWay) {
  if (::geteuid() != 0) GTEST_SKIP() << "for a root caller, whose plan masks such sockets";
  CORDON_SKIP_UNDER_BWRAP("bubblewrap still masks it, and refuses the run (decision 0033)");
  const std::filesystem::path dir = "/var/lib/cordon-kernel-private-" + unique_;
  cleanup_.push_back(dir);
  // Private before the socket is in it: a plan made meanwhile (another test's, running beside
  // this one) must never see it searchable and then meet it locked.
  std::filesystem::create_directory(dir);
  ASSERT_EQ(::chmod(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  HostListener listener = HostListener::Pathname((dir / "db.sock").string());
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult result = Probe(*session, "connect-unix " + listener.address());
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
  EXPECT_FALSE(listener.Reached());
  auto off = SessionOrSkip(MakeConfig(SandboxMode::kOff, NetworkPolicy::kAllow));
  if (!off) return;
  const RunResult reached = Probe(*off, "connect-unix " + listener.address());
  EXPECT_TRUE(reached.stdout_data.data.starts_with("ok")) << Describe(reached);
  EXPECT_TRUE(listener.Reached());
}

// Hiding /run with network allow must not break name resolution: /etc/resolv.conf often points
// into /run (systemd-resolved, resolvconf, NetworkManager), which stays visible.
TEST_F(NetworkTest, ResolvConfReadsTheSameInsideWithNetworkAllow) {
  if (!Exists("/etc/resolv.conf")) GTEST_SKIP() << "no /etc/resolv.conf here";
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!session) return;
  const RunResult result = Shell(*session, "cat /etc/resolv.conf");
  EXPECT_EQ(result.exit_code, 0) << Describe(result);
  EXPECT_EQ(result.stdout_data.data, ReadFile("/etc/resolv.conf")) << Describe(result);
  // Twin: the host's other runtime entries are gone (when there are any to check).
  if (Exists("/run/dbus")) {
    const RunResult dbus = Shell(*session, "ls -A /run/dbus | wc -l");
    EXPECT_EQ(dbus.stdout_data.data, "0\n") << Describe(dbus);
  }
}

TEST_F(NetworkTest, ASocketTheCommandCreatesInTheWorkspaceWorksWithEitherNetworkSetting) {
  for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, network));
    if (!session) return;
    const RunResult ws = Probe(*session, "unix-echo " + (workspace_ / "own.sock").string());
    EXPECT_EQ(ws.stdout_data.data, "ok\n") << Describe(ws);
    const RunResult tmp = Probe(*session, "unix-echo \"$TMPDIR/own.sock\"");
    EXPECT_EQ(tmp.stdout_data.data, "ok\n") << Describe(tmp);
  }
}

// Sockets outside /run: a host listener in a directory the sandbox sees read-only (the
// workspace in read_only mode) gets no connection, with either network setting; the same
// place is reachable in mode off (the twin that shows the listener works).
TEST_F(NetworkTest, HostPathnameSocketOutsideTheWritableAreasGetsNoConnection) {
  std::filesystem::create_directory(workspace_ / "svc");
  HostListener listener = HostListener::Pathname((workspace_ / "svc" / "db.sock").string());
  for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly, network));
    if (!session) return;
    const RunResult result = Probe(*session, "connect-unix " + listener.address());
    EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
    EXPECT_FALSE(listener.Reached()) << NetworkPolicyName(network);
  }
  auto off = SessionOrSkip(MakeConfig(SandboxMode::kOff, NetworkPolicy::kAllow));
  if (!off) return;
  const RunResult reached = Probe(*off, "connect-unix " + listener.address());
  EXPECT_EQ(reached.stdout_data.data, "ok\n") << Describe(reached);
  EXPECT_TRUE(listener.Reached());
}

// As root the listener can sit where such services live (/var/lib), outside every tree the
// tests create.
TEST_F(NetworkTest, HostPathnameSocketUnderVarLibGetsNoConnectionWhenRunAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a directory under /var/lib";
  const std::filesystem::path dir = "/var/lib/cordon-test-" + unique_;
  std::filesystem::create_directory(dir);
  {
    HostListener listener = HostListener::Pathname((dir / "svc.sock").string());
    for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
      auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, network));
      if (!session) break;
      const RunResult result = Probe(*session, "connect-unix " + listener.address());
      EXPECT_FALSE(result.stdout_data.data.starts_with("ok")) << Describe(result);
      EXPECT_FALSE(listener.Reached()) << NetworkPolicyName(network);
    }
  }
  std::filesystem::remove_all(dir);
}

TEST_F(NetworkTest, NetlinkDestinationsThatNeedCapabilitiesAreRefusedInEveryNetworkSetting) {
  // The supervisor performs connect() (decision 0019), and the kernel checks a netlink
  // destination against the connecting task's capabilities: the command must not borrow ours
  // (forged uevents to udev with network allow, as root).
  for (NetworkPolicy network : {NetworkPolicy::kAllow, NetworkPolicy::kDeny}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, network));
    if (!session) return;
    const RunResult groups = Probe(*session, "connect-uevent 1");
    EXPECT_EQ(groups.stdout_data.data, "EPERM\n") << Describe(groups);
    // Twin: connecting to the kernel itself is what every netlink user does.
    const RunResult kernel = Probe(*session, "connect-uevent 0");
    EXPECT_EQ(kernel.stdout_data.data, "ok\n") << Describe(kernel);
  }
}

}  // namespace
}  // namespace cordon::kernel_test
