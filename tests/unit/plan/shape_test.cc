// ShapeOf: which fields of a plan decide whether a sandbox built from another plan may run it
// (a zygote: the sandbox shape; a prepared command: that and the prepared extras), and which
// are applied per command. Each field is changed alone; a field ShapeOf does not name does
// not build (plan/shape.cc).
#include "plan/shape.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "plan/hidden_watch.h"
#include "planner_fixture.h"

namespace cordon::plan {
namespace {

LaunchPlan Shaped() {
  LaunchPlan p;
  p.namespaces = {true, true, true, true, true, true};
  p.hostname = "cordon";
  p.mounts = {{MountOpKind::kTmpfs, "/tmp"},
              {MountOpKind::kBindWritable, "/home/u/ws", false, {1, 2}},
              {MountOpKind::kMaskFile, "/home/u/ws/.env", false, {1, 3}}};
  p.seccomp.enabled = true;
  p.landlock.abi = 7;
  p.landlock.writable = {"/home/u/ws"};
  p.unix_connect_beneath = {"/home/u/ws"};
  p.argv = {"true"};
  return p;
}

struct Change {
  const char* field;
  std::function<void(LaunchPlan&)> apply;
};

TEST(Shape, WhatIsPerCommandNeverDecidesReuse) {
  const Change changes[] = {
      {"argv",
       [](LaunchPlan& p) {
         p.argv = {"make", "test"};
       }},
      {"env", [](LaunchPlan& p) { p.env = {"A=b"}; }},
      {"cwd", [](LaunchPlan& p) { p.cwd = "/home/u/ws/sub"; }},
      {"workspace", [](LaunchPlan& p) { p.workspace = "/home/u/ws"; }},
      {"enforcement", [](LaunchPlan& p) { p.enforcement.backend = "other"; }},
      {"absent_protected", [](LaunchPlan& p) { p.absent_protected = {"/home/u/ws/.git"}; }},
      {"absent_hidden", [](LaunchPlan& p) { p.absent_hidden = {"/home/u/.aws"}; }},
      {"placeholders",
       [](LaunchPlan& p) {
         p.placeholders = {{"/home/u/ws", ".mcp.json", false}};
       }},
      {"home", [](LaunchPlan& p) { p.home = "/tmp/elsewhere"; }},
      {"tmpdir", [](LaunchPlan& p) { p.tmpdir = "/tmp/elsewhere"; }},
      {"limits.cgroup", [](LaunchPlan& p) { p.limits.cgroup.pids_max = 10; }},
  };
  for (const Change& change : changes) {
    LaunchPlan other = Shaped();
    change.apply(other);
    EXPECT_TRUE(SamePreparedShape(Shaped(), other)) << change.field;
    EXPECT_TRUE(SameSandboxShape(Shaped(), other)) << change.field;
  }
}

TEST(Shape, EveryPartOfTheSandboxShapeDecidesReuse) {
  const Change changes[] = {
      {"sandboxed", [](LaunchPlan& p) { p.sandboxed = false; }},
      {"namespaces.user", [](LaunchPlan& p) { p.namespaces.user = false; }},
      {"namespaces.mount", [](LaunchPlan& p) { p.namespaces.mount = false; }},
      {"namespaces.pid", [](LaunchPlan& p) { p.namespaces.pid = false; }},
      {"namespaces.net", [](LaunchPlan& p) { p.namespaces.net = false; }},
      {"namespaces.ipc", [](LaunchPlan& p) { p.namespaces.ipc = false; }},
      {"namespaces.uts", [](LaunchPlan& p) { p.namespaces.uts = false; }},
      {"hostname", [](LaunchPlan& p) { p.hostname = "other"; }},
      {"mounts: one more",
       [](LaunchPlan& p) {
         p.mounts.push_back({MountOpKind::kBindReadOnly, "/home/u/ws/.git"});
       }},
      {"mounts: kind", [](LaunchPlan& p) { p.mounts[2].kind = MountOpKind::kMaskDirectory; }},
      {"mounts: path", [](LaunchPlan& p) { p.mounts[2].path = "/home/u/ws/.envrc"; }},
      {"mounts: optional", [](LaunchPlan& p) { p.mounts[2].optional = true; }},
      {"mounts: the mask's target replaced", [](LaunchPlan& p) { p.mounts[2].id.ino = 4; }},
      {"mounts: the bind's source on another device",
       [](LaunchPlan& p) { p.mounts[1].id.dev = 9; }},
      {"seccomp.enabled", [](LaunchPlan& p) { p.seccomp.enabled = false; }},
      {"seccomp.sockets", [](LaunchPlan& p) { p.seccomp.sockets = SocketPolicy::kLocalFamilies; }},
      {"seccomp.refuse_unix_sockets", [](LaunchPlan& p) { p.seccomp.refuse_unix_sockets = true; }},
      {"seccomp.refuse_setid_modes", [](LaunchPlan& p) { p.seccomp.refuse_setid_modes = false; }},
      {"seccomp.broker_connect", [](LaunchPlan& p) { p.seccomp.broker_connect = true; }},
      {"seccomp.observe_writes", [](LaunchPlan& p) { p.seccomp.observe_writes = true; }},
      {"seccomp.observe_datagrams", [](LaunchPlan& p) { p.seccomp.observe_datagrams = true; }},
      {"domains: set", [](LaunchPlan& p) { p.domains = net::DomainRules(); }},
      {"domains: a rule",
       [](LaunchPlan& p) { p.domains = *net::DomainRules::Parse({"a.test"}, {}); }},
      {"parent_proxy: set",
       [](LaunchPlan& p) { p.parent_proxy = *net::ParseParentProxyUrl("http://p:1", "x"); }},
  };
  for (const Change& change : changes) {
    LaunchPlan other = Shaped();
    change.apply(other);
    EXPECT_FALSE(SameSandboxShape(Shaped(), other)) << change.field;
    EXPECT_FALSE(SamePreparedShape(Shaped(), other)) << change.field;
  }
}

TEST(Shape, DomainRulesOfTwoPlansCompareByTheirRules) {
  LaunchPlan a = Shaped();
  LaunchPlan b = Shaped();
  a.domains = *net::DomainRules::Parse({"a.test"}, {});
  b.domains = *net::DomainRules::Parse({"a.test"}, {});
  EXPECT_TRUE(SameSandboxShape(a, b));
  b.domains = *net::DomainRules::Parse({"a.test"}, {"b.a.test"});
  EXPECT_FALSE(SameSandboxShape(a, b));
}

TEST(Shape, ThePreparedExtrasDecideOnlyThePreparedCommandsReuse) {
  const Change changes[] = {
      {"landlock.abi", [](LaunchPlan& p) { p.landlock.abi = 6; }},
      {"landlock.handled_fs", [](LaunchPlan& p) { p.landlock.handled_fs = 1; }},
      {"landlock.writable", [](LaunchPlan& p) { p.landlock.writable.push_back("/opt"); }},
      {"landlock.readable", [](LaunchPlan& p) { p.landlock.readable.push_back("/opt"); }},
      {"landlock.list_root", [](LaunchPlan& p) { p.landlock.list_root = true; }},
      {"landlock.handled_net", [](LaunchPlan& p) { p.landlock.handled_net = 1; }},
      {"landlock.scoped", [](LaunchPlan& p) { p.landlock.scoped = 1; }},
      {"limits.rlimits.open_files", [](LaunchPlan& p) { p.limits.rlimits.open_files = 64; }},
      {"limits.rlimits.cpu_seconds", [](LaunchPlan& p) { p.limits.rlimits.cpu_seconds = 5; }},
      {"limits.rlimits.processes", [](LaunchPlan& p) { p.limits.rlimits.processes = 5; }},
      {"unix_connect_beneath", [](LaunchPlan& p) { p.unix_connect_beneath.clear(); }},
  };
  for (const Change& change : changes) {
    LaunchPlan other = Shaped();
    change.apply(other);
    EXPECT_TRUE(SameSandboxShape(Shaped(), other)) << change.field;
    EXPECT_FALSE(SamePreparedShape(Shaped(), other)) << change.field;
  }
}

// The planner names each mask by the file it covers: a hidden file the host replaced (an
// atomic save renames a new file over it) makes a plan of another shape, though the path, the
// kind and every flag are the same; the same file planned again makes the same shape.
TEST(Shape, APlanOfAHiddenFileReplacedOnTheHostHasAnotherShape) {
  char templ[] = "/var/tmp/cordon-shape-XXXXXX";
  ASSERT_NE(::mkdtemp(templ), nullptr);
  const std::filesystem::path dir = templ;
  const std::filesystem::path secret = dir / "app.env";
  { std::ofstream(secret) << "one\n"; }
  Config config = plan_test::Default();
  config.sandbox.hidden_paths.push_back(secret);
  PlanRequest request = plan_test::Request();
  request.workspace = dir;  // in the sandbox's view (the private /var/tmp hides the rest)
  Result<LaunchPlan> first = Plan(config, plan_test::Everything(), request);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  Result<LaunchPlan> again = Plan(config, plan_test::Everything(), request);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_TRUE(SameSandboxShape(*first, *again));
  { std::ofstream(dir / "app.env.new") << "two\n"; }
  std::filesystem::rename(dir / "app.env.new", secret);
  Result<LaunchPlan> replaced = Plan(config, plan_test::Everything(), request);
  ASSERT_TRUE(replaced.has_value()) << replaced.error().message;
  EXPECT_FALSE(SameSandboxShape(*first, *replaced));
  // The mask is there in both, over the same path: only the identity differs.
  auto mask = [&](const LaunchPlan& p) {
    for (const MountOp& op : p.mounts) {
      if (op.path == secret) return op;
    }
    return MountOp{};
  };
  EXPECT_EQ(mask(*first).kind, MountOpKind::kMaskFile);
  EXPECT_EQ(mask(*replaced).kind, MountOpKind::kMaskFile);
  EXPECT_NE(mask(*first).id, mask(*replaced).id);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cordon::plan
