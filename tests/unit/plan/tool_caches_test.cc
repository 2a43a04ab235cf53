// plan/tool_caches.h and the planner's use of PlanRequest::tool_cache (decision 0041).
#include "plan/tool_caches.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "planner_fixture.h"

namespace cordon::plan {
namespace {

using namespace cordon::plan::plan_test;  // NOLINT(google-build-using-namespace)

TEST(ToolCachesRoot, XdgCacheHomeWhenAbsoluteElseTheHomesDotCache) {
  EXPECT_EQ(ToolCachesRoot({"XDG_CACHE_HOME=/srv/c"}, "/home/u"),
            std::filesystem::path("/srv/c/cordon/tool-caches"));
  EXPECT_EQ(ToolCachesRoot({"XDG_CACHE_HOME=rel", "X=1"}, "/home/u"),
            std::filesystem::path("/home/u/.cache/cordon/tool-caches"));
  EXPECT_EQ(ToolCachesRoot({}, "/home/u/"),
            std::filesystem::path("/home/u/.cache/cordon/tool-caches"));
  // The first definition is the one the caller's getenv() sees.
  EXPECT_EQ(ToolCachesRoot({"XDG_CACHE_HOME=/a", "XDG_CACHE_HOME=/b"}, "/home/u"),
            std::filesystem::path("/a/cordon/tool-caches"));
  EXPECT_EQ(ToolCachesRoot({}, ""), std::nullopt);
  EXPECT_EQ(ToolCachesRoot({}, "relative"), std::nullopt);
}

TEST(ToolCacheDirectory, SharedPerWorkspaceOrNone) {
  const std::filesystem::path root = "/h/.cache/cordon/tool-caches";
  EXPECT_EQ(ToolCacheDirectory(ToolCaches::kShared, root, "/h/a"), root / "shared");
  EXPECT_EQ(ToolCacheDirectory(ToolCaches::kOff, root, "/h/a"), std::nullopt);
  const auto a = ToolCacheDirectory(ToolCaches::kWorkspace, root, "/h/a");
  const auto b = ToolCacheDirectory(ToolCaches::kWorkspace, root, "/h/b");
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_EQ(*a, root / "workspaces" / WorkspaceKey("/h/a") / "cache");
}

TEST(WorkspaceKey, StableSixteenHexDigits) {
  // FNV-1a 64 of "a" (a published test vector): the same on every machine and build.
  EXPECT_EQ(WorkspaceKey("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(WorkspaceKey("/h/a").size(), 16u);
  EXPECT_NE(WorkspaceKey("/h/a"), WorkspaceKey("/h/a/"));
}

TEST(ToolCacheVariables, EachToolsOwnVariableIntoItsOwnPart) {
  const std::vector<std::string> vars = ToolCacheVariables("/c");
  auto has = [&](const std::string& entry) {
    return std::find(vars.begin(), vars.end(), entry) != vars.end();
  };
  EXPECT_TRUE(has("npm_config_cache=/c/npm"));
  EXPECT_TRUE(has("GOCACHE=/c/go-build"));
  EXPECT_TRUE(has("GOMODCACHE=/c/go-mod"));
  EXPECT_TRUE(has("CARGO_HOME=/c/cargo"));
  EXPECT_TRUE(has("MAVEN_OPTS=-Dmaven.repo.local=/c/maven"));
  EXPECT_EQ(vars.size(), std::size(kToolCacheEntries));
}

bool BindsWritable(const LaunchPlan& plan, const std::filesystem::path& path) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const MountOp& op) {
    return op.kind == MountOpKind::kBindWritable && !op.optional && op.path == path;
  });
}

bool HasEnv(const LaunchPlan& plan, const std::string& entry) {
  return std::find(plan.env.begin(), plan.env.end(), entry) != plan.env.end();
}

TEST(PlannerToolCache, BoundWritableAndNamedInTheToolsVariables) {
  PlanRequest request = Request();
  request.tool_cache = "/var";  // any existing directory outside the workspace
  auto plan = Plan(Default(), Everything(), request);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(BindsWritable(*plan, "/var"));
  EXPECT_NE(std::find(plan->landlock.writable.begin(), plan->landlock.writable.end(),
                      std::filesystem::path("/var")),
            plan->landlock.writable.end());
  EXPECT_TRUE(HasEnv(*plan, "GOCACHE=/var/go-build"));
  // Never a protected root: no placeholder for an absent .git of the cache.
  EXPECT_FALSE(std::any_of(plan->placeholders.begin(), plan->placeholders.end(),
                           [](const Placeholder& p) { return p.root == "/var"; }));
}

// The twins: no cache without one given, with tool_caches off, in read_only mode; a caller's
// value passed on purpose wins; a cache inside the workspace needs no bind of its own.
TEST(PlannerToolCache, NoneWhenOffReadOnlyOrNotGiven) {
  auto none = Plan(Default(), Everything(), Request());
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_FALSE(std::any_of(none->env.begin(), none->env.end(),
                           [](const std::string& e) { return e.starts_with("GOCACHE="); }));
  PlanRequest request = Request();
  request.tool_cache = "/var";
  for (const auto& [mode, caches] : {std::pair{SandboxMode::kWorkspaceWrite, ToolCaches::kOff},
                                     std::pair{SandboxMode::kReadOnly, ToolCaches::kShared}}) {
    Config config = Default();
    config.sandbox.mode = mode;
    config.sandbox.tool_caches = caches;
    auto plan = Plan(config, Everything(), request);
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_FALSE(BindsWritable(*plan, "/var"));
    EXPECT_FALSE(HasEnv(*plan, "GOCACHE=/var/go-build"));
  }
  Config passing = Default();
  passing.environment.pass = {"GOCACHE"};
  request.caller_env.push_back("GOCACHE=/mine");
  auto passed = Plan(passing, Everything(), request);
  ASSERT_TRUE(passed) << passed.error().message;
  EXPECT_TRUE(HasEnv(*passed, "GOCACHE=/mine"));
  PlanRequest inside = Request();
  inside.tool_cache = "/usr/share";
  auto nested = Plan(Default(), Everything(), inside);
  ASSERT_TRUE(nested) << nested.error().message;
  EXPECT_FALSE(BindsWritable(*nested, "/usr/share"));
  EXPECT_TRUE(HasEnv(*nested, "GOCACHE=/usr/share/go-build"));
}

}  // namespace
}  // namespace cordon::plan
