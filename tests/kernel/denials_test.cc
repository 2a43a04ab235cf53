// What the sandbox refused, reported by the layer that refused it (docs/denials.md): each case
// a real refusal checked for its kind, target, layer and rule, with its twin — the same call
// failing for the command's own reasons reports no denial. On every path (library, run
// server, MCP) and both backends where the layer is on the path.
#include <fmt/format.h>

#include <algorithm>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using DenialsTest = ProbeTest;

const Denial* Find(const RunResult& result, const std::string& kind, const std::string& target) {
  const auto it = std::find_if(result.denials.begin(), result.denials.end(), [&](const Denial& d) {
    return d.kind == kind && d.target == target;
  });
  return it == result.denials.end() ? nullptr : &*it;
}

std::string Listed(const RunResult& result) {
  std::string text;
  for (const Denial& d : result.denials) {
    text += fmt::format("[{} {} {} {}] ", d.kind, d.target, d.layer, d.rule);
  }
  return text;
}

// A connect beyond the sandbox's loopback (a documentation address: nothing is sent, the
// sandbox's network namespace has no route) is the network setting's refusal.
TEST_F(DenialsTest, AConnectBeyondTheLoopbackIsReportedAsTheNetworkSetting) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult result = Probe(*session, "connect-tcp 192.0.2.1 443");
  EXPECT_NE(result.stdout_data.data, "ok\n") << Describe(result);
  const Denial* d = Find(result, "connect", "192.0.2.1:443");
  ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
  EXPECT_EQ(d->rule, "sandbox.network: deny");
  EXPECT_TRUE(d->layer == "network" || d->layer == "landlock") << d->layer;
  EXPECT_NE(d->fix.find("--network allow"), std::string::npos) << d->fix;
}

// The twin: a closed port on the sandbox's own loopback, with nothing listening on the host
// either, is the command's own failure.
TEST_F(DenialsTest, AClosedPortOfTheSandboxsOwnLoopbackIsNoDenial) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  int port = 0;
  {
    HostListener probe_port = HostListener::Tcp();  // a free port, closed again at once
    port = probe_port.port();
  }
  const RunResult result = Probe(*session, fmt::format("connect-tcp 127.0.0.1 {}", port));
  EXPECT_NE(result.stdout_data.data, "ok\n") << Describe(result);
  EXPECT_TRUE(result.denials.empty()) << Listed(result);
}

// A service the host has on its loopback (a database, a dev server) is not the sandbox's: the
// command's connect finds nothing there, and cordon says why.
TEST_F(DenialsTest, TheHostsLoopbackServiceIsReportedAsOutOfReach) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  HostListener listener = HostListener::Tcp();
  const std::string target = "127.0.0.1:" + listener.address();
  const RunResult result = Probe(*session, "connect-tcp 127.0.0.1 " + listener.address());
  EXPECT_FALSE(listener.Reached());
  const Denial* d = Find(result, "connect", target);
  ASSERT_NE(d, nullptr) << Listed(result) << Describe(result);
  EXPECT_EQ(d->layer, "network");
}

// A resolver's query goes nowhere with network deny: reported at once as DNS, so an agent does
// not read a resolver timeout as a flaky network. Twin: UDP to another loopback port.
TEST_F(DenialsTest, ADnsQueryIsReportedAndOtherLoopbackUdpIsNot) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (!session) return;
  const RunResult dns = Probe(*session, "connect-udp 127.0.0.53 53");
  const Denial* d = Find(dns, "dns", "127.0.0.53:53");
  ASSERT_NE(d, nullptr) << Listed(dns) << Describe(dns);
  EXPECT_EQ(d->layer, "network");
  const RunResult other = Probe(*session, "connect-udp 127.0.0.1 5353");
  EXPECT_EQ(other.stdout_data.data, "ok\n") << Describe(other);
  EXPECT_TRUE(other.denials.empty()) << Listed(other);
}

// Network allow: nothing of the above is cordon's doing (only loopback is tried here).
TEST_F(DenialsTest, NetworkAllowReportsNoNetworkDenial) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kAllow));
  if (!session) return;
  int port = 0;
  {
    HostListener probe_port = HostListener::Tcp();
    port = probe_port.port();
  }
  const RunResult result = Probe(*session, fmt::format("connect-tcp 127.0.0.1 {}", port));
  EXPECT_TRUE(result.denials.empty()) << Listed(result);
}

// The policy's refusal is a denial too, first; a limit the command met is one (its own line
// says it, the list carries it for --json and MCP).
TEST_F(DenialsTest, ThePolicyAndATimeoutAreListed) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult denied = Shell(*session, "sudo id");
  ASSERT_EQ(denied.status, RunStatus::kDenied) << Describe(denied);
  ASSERT_FALSE(denied.denials.empty());
  EXPECT_EQ(denied.denials.front().layer, "policy");
  EXPECT_EQ(denied.denials.front().rule, denied.decision.rule_id);
  const RunResult slow = Shell(*session, "sleep 5", std::chrono::milliseconds(300));
  EXPECT_NE(Find(slow, "limit", "timeout"), nullptr) << Listed(slow) << Describe(slow);
  // Twin: a command that fails by itself reports nothing.
  const RunResult failed = Shell(*session, "cat does-not-exist");
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_TRUE(failed.denials.empty()) << Listed(failed);
}

}  // namespace
}  // namespace cordon::kernel_test
