// plan/tool_cache_seeds.h: where the host's caches are, and that a tool home keeping
// credentials gives only its cache directories (decision 0049).
#include "plan/tool_cache_seeds.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> SourcesOf(const std::vector<ToolCacheSeed>& seeds, std::string_view tool) {
  std::vector<fs::path> found;
  for (const ToolCacheSeed& seed : seeds) {
    if (seed.tool == tool) found.push_back(seed.source);
  }
  return found;
}

TEST(HostToolCacheSeeds, TheToolsDefaultsUnderTheHome) {
  const std::vector<ToolCacheSeed> seeds = HostToolCacheSeeds({}, "/home/u");
  EXPECT_EQ(SourcesOf(seeds, "npm"), std::vector<fs::path>{"/home/u/.npm/_cacache"});
  EXPECT_EQ(SourcesOf(seeds, "pip"), std::vector<fs::path>{"/home/u/.cache/pip"});
  EXPECT_EQ(SourcesOf(seeds, "go"),
            (std::vector<fs::path>{"/home/u/.cache/go-build", "/home/u/go/pkg/mod"}));
  EXPECT_EQ(SourcesOf(seeds, "maven"), std::vector<fs::path>{"/home/u/.m2/repository"});
  EXPECT_EQ(SourcesOf(seeds, "ccache"), std::vector<fs::path>{"/home/u/.cache/ccache"});
  // Each goes where the tool's variable points inside the sandbox (plan/tool_caches.h).
  for (const ToolCacheSeed& seed : seeds) {
    EXPECT_TRUE(seed.destination.is_relative()) << seed.destination;
    if (seed.tool == "npm") {
      EXPECT_EQ(seed.destination, "npm/_cacache");
    }
    if (seed.source == "/home/u/go/pkg/mod") {
      EXPECT_EQ(seed.destination, "go-mod");
    }
  }
}

// A tool home that keeps credentials beside its caches gives only the caches.
TEST(HostToolCacheSeeds, NeverATreeThatHoldsCredentials) {
  const std::vector<ToolCacheSeed> seeds = HostToolCacheSeeds({"CARGO_HOME=/opt/cargo"}, "/home/u");
  EXPECT_EQ(SourcesOf(seeds, "cargo"),
            (std::vector<fs::path>{"/opt/cargo/registry", "/opt/cargo/git"}));
  EXPECT_EQ(SourcesOf(seeds, "gradle"),
            (std::vector<fs::path>{"/home/u/.gradle/caches", "/home/u/.gradle/wrapper"}));
  for (const ToolCacheSeed& seed : seeds) {
    for (const char* whole : {"/opt/cargo", "/home/u/.gradle", "/home/u/.m2", "/home/u/.npm",
                              "/home/u", "/home/u/.cache"}) {
      EXPECT_NE(seed.source, fs::path(whole)) << seed.tool;
    }
  }
}

// The caller's own variables decide, as the tool reads them; a value that is not an absolute
// path (GOCACHE=off, a relative one) gives no source rather than a guess.
TEST(HostToolCacheSeeds, TheCallersVariablesDecide) {
  const std::vector<ToolCacheSeed> seeds = HostToolCacheSeeds(
      {"npm_config_cache=/srv/npm", "XDG_CACHE_HOME=/srv/xdg", "GOCACHE=off",
       "GOPATH=/srv/gopath:/other", "PIP_CACHE_DIR=relative", "CCACHE_DIR=/srv/cc/"},
      "/home/u");
  EXPECT_EQ(SourcesOf(seeds, "npm"), std::vector<fs::path>{"/srv/npm/_cacache"});
  EXPECT_EQ(SourcesOf(seeds, "go"), std::vector<fs::path>{"/srv/gopath/pkg/mod"});
  EXPECT_TRUE(SourcesOf(seeds, "pip").empty());
  EXPECT_EQ(SourcesOf(seeds, "uv"), std::vector<fs::path>{"/srv/xdg/uv"});
  EXPECT_EQ(SourcesOf(seeds, "ccache"), std::vector<fs::path>{"/srv/cc/"});
  // Without an absolute home only what a variable names absolutely remains.
  const std::vector<ToolCacheSeed> homeless =
      HostToolCacheSeeds({"GOMODCACHE=/srv/mod"}, "relative");
  ASSERT_EQ(homeless.size(), 1u);
  EXPECT_EQ(homeless.front().source, "/srv/mod");
}

}  // namespace
}  // namespace cordon::plan
