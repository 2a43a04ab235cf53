// What a plan takes from network "domains" (decision 0050): the sandbox's own network
// namespace, the rules, cordon's resolv.conf; refused where it cannot hold (bubblewrap, no
// network namespace, no seccomp listener), each next to the plan that holds.
#include "plan/network_domains.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "planner_fixture.h"

namespace cordon::plan {
namespace {

using plan_test::Contains;
using plan_test::Request;

Config Domains(std::vector<std::string> allow, std::vector<std::string> deny = {}) {
  Config c;
  c.sandbox.network = NetworkPolicy::kDomains;
  c.sandbox.allowed_domains = std::move(allow);
  c.sandbox.denied_domains = std::move(deny);
  return c;
}

linux_native::KernelFeatures Everything() {
  linux_native::KernelFeatures f = plan_test::Everything();
  f.seccomp_listener = true;
  return f;
}

BackendProbes UsableBwrap() {
  BackendProbes p;
  p.bwrap = BwrapProbe{.probed = true, .usable = true, .setuid = false, .detail = "bwrap"};
  return p;
}

bool HasResolverMount(const LaunchPlan& plan) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                     [](const MountOp& op) { return op.kind == MountOpKind::kResolverConfig; });
}

TEST(NetworkDomainsPlan, OwnNetworkNamespaceRulesAndResolverConfig) {
  Result<LaunchPlan> plan =
      Plan(Domains({"pkg.test"}, {"secret.pkg.test"}), Everything(), Request());
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->namespaces.net);
  EXPECT_TRUE(plan->seccomp.broker_connect);
  ASSERT_TRUE(plan->domains);
  EXPECT_TRUE(plan->domains->ForName("pkg.test").allowed);
  EXPECT_FALSE(plan->domains->ForName("secret.pkg.test").allowed);
  EXPECT_EQ(HasResolverMount(*plan), ResolverConfigMount().has_value());
  EXPECT_TRUE(Contains(
      [&] {
        std::string all;
        for (const std::string& e : plan->env) all += e + "\n";
        return all;
      }(),
      "CORDON_SANDBOX_NETWORK=domains"));
}

TEST(NetworkDomainsPlan, DenyAndAllowHaveNoRulesAndNoResolverConfig) {
  for (const NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    Config c = Domains({"pkg.test"});
    c.sandbox.network = network;
    Result<LaunchPlan> plan = Plan(c, Everything(), Request());
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_FALSE(plan->domains);
    EXPECT_FALSE(HasResolverMount(*plan));
  }
}

TEST(NetworkDomainsPlan, ParentProxyComesFromTheCallersEnvironmentOrTheSetting) {
  PlanRequest request = Request();
  request.caller_env = {"HTTPS_PROXY=http://proxy.corp.example:3128", "NO_PROXY=.corp.example"};
  Result<LaunchPlan> plan = Plan(Domains({"pkg.test"}), Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->parent_proxy);
  EXPECT_EQ(plan->parent_proxy->Address(), "proxy.corp.example:3128");
  EXPECT_EQ(plan->parent_proxy->no_proxy, std::vector<std::string>{"corp.example"});
  // The sandbox's own proxy variables name its proxy, never the parent it cannot reach.
  EXPECT_TRUE(std::none_of(plan->env.begin(), plan->env.end(), [](const std::string& e) {
    return e.find("proxy.corp.example") != std::string::npos;
  }));

  Config none = Domains({"pkg.test"});
  none.sandbox.parent_proxy = "none";
  plan = Plan(none, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->parent_proxy);

  // Another network mode has none, whatever the environment says.
  Config deny = Domains({"pkg.test"});
  deny.sandbox.network = NetworkPolicy::kDeny;
  request.caller_env = {"HTTPS_PROXY=socks5://proxy:1080"};
  plan = Plan(deny, Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->parent_proxy);
}

TEST(NetworkDomainsPlan, AParentProxyThatCannotBeChainedRefusesTheRun) {
  PlanRequest request = Request();
  for (const char* url : {"socks5://proxy:1080", "https://proxy:443", "http://u:p@proxy:3128"}) {
    request.caller_env = {std::string("HTTPS_PROXY=") + url};
    Result<LaunchPlan> plan = Plan(Domains({"pkg.test"}), Everything(), request);
    ASSERT_FALSE(plan) << url;
    EXPECT_EQ(plan.error().code, ErrorCode::kUnavailable);
    EXPECT_TRUE(Contains(plan.error().message, "HTTPS_PROXY")) << plan.error().message;
    EXPECT_TRUE(Contains(plan.error().message, "refused rather than sent past"))
        << plan.error().message;
  }
  // Twin: an http:// one is taken.
  request.caller_env = {"HTTPS_PROXY=http://proxy:3128"};
  EXPECT_TRUE(Plan(Domains({"pkg.test"}), Everything(), request));
}

TEST(NetworkDomainsPlan, CapabilitiesNameTheParentOrWhyItCannotBeUsed) {
  Capabilities caps;
  DescribeParentProxy(Domains({"pkg.test"}).sandbox, {"https_proxy=http://p.example:3128"}, caps);
  EXPECT_EQ(caps.parent_proxy, "p.example:3128 (from https_proxy)");
  EXPECT_TRUE(caps.missing.empty());

  Capabilities refused;
  DescribeParentProxy(Domains({"pkg.test"}).sandbox, {"HTTPS_PROXY=socks5://p:1"}, refused);
  EXPECT_TRUE(refused.parent_proxy.empty());
  ASSERT_EQ(refused.missing.size(), 1u);
  EXPECT_TRUE(Contains(refused.missing[0], "socks5://")) << refused.missing[0];

  // Another mode: nothing, whatever the environment holds.
  Config deny = Domains({"pkg.test"});
  deny.sandbox.network = NetworkPolicy::kDeny;
  Capabilities none;
  DescribeParentProxy(deny.sandbox, {"HTTPS_PROXY=socks5://p:1"}, none);
  EXPECT_TRUE(none.parent_proxy.empty());
  EXPECT_TRUE(none.missing.empty());
}

TEST(NetworkDomainsPlan, ResolverConfigIsTheHostFileAsItsLinksResolve) {
  const std::optional<MountOp> op = ResolverConfigMount();
  std::error_code ec;
  const std::filesystem::path host = std::filesystem::canonical("/etc/resolv.conf", ec);
  if (ec) {
    EXPECT_FALSE(op);  // none, or dangling: glibc asks 127.0.0.1 anyway
    return;
  }
  ASSERT_TRUE(op);
  EXPECT_EQ(op->path, host);
}

TEST(NetworkDomainsPlan, RefusedWithBubblewrapNativeTwinRuns) {
  Config c = Domains({"pkg.test"});
  c.sandbox.backend = BackendChoice::kBwrap;
  Result<LaunchPlan> refused = Plan(c, Everything(), Request(), UsableBwrap());
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "needs the native backend"))
      << refused.error().message;
  c.sandbox.backend = BackendChoice::kNative;
  EXPECT_TRUE(Plan(c, Everything(), Request(), UsableBwrap()));
}

TEST(NetworkDomainsPlan, RefusedWithoutSeccompListenerOrNetworkNamespace) {
  linux_native::KernelFeatures no_listener = Everything();
  no_listener.seccomp_listener = false;
  Result<LaunchPlan> refused = Plan(Domains({"pkg.test"}), no_listener, Request());
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "seccomp user notification"))
      << refused.error().message;
  // Network deny holds without a listener (its own namespace is enough).
  Config deny = Domains({"pkg.test"});
  deny.sandbox.network = NetworkPolicy::kDeny;
  EXPECT_TRUE(Plan(deny, no_listener, Request()));

  linux_native::KernelFeatures no_netns = Everything();
  no_netns.net_namespace = false;
  refused = Plan(Domains({"pkg.test"}), no_netns, Request());
  ASSERT_FALSE(refused);
  EXPECT_TRUE(Contains(refused.error().message, "network namespace of the sandbox's own"))
      << refused.error().message;
}

TEST(NetworkDomainsPlan, CapabilitiesNameTheModeAndLists) {
  const Capabilities caps =
      DescribeCapabilities(Domains({"pkg.test", "*.cdn.test"}, {"x.cdn.test"}), Everything());
  EXPECT_EQ(caps.network, NetworkPolicy::kDomains);
  EXPECT_EQ(caps.allowed_domains, (std::vector<std::string>{"pkg.test", "*.cdn.test"}));
  EXPECT_EQ(caps.denied_domains, std::vector<std::string>{"x.cdn.test"});
  EXPECT_TRUE(caps.network_enforced);
  const Capabilities deny = DescribeCapabilities(Config{}, Everything());
  EXPECT_TRUE(deny.allowed_domains.empty());
}

}  // namespace
}  // namespace cordon::plan
