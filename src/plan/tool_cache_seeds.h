// Where the host's own caches are, to seed cordon's tool caches from (`cordon cache seed`,
// decision 0049): each tool's cache directory as the tool finds it from the caller's
// environment (its own variable, else its default under the home or XDG_CACHE_HOME), and the
// part of cordon's cache directory it goes to. Only the cache itself: a tool home that also
// keeps credentials (CARGO_HOME's credentials.toml, GRADLE_USER_HOME's gradle.properties,
// ~/.m2/settings.xml) gives only its cache subdirectories. Pure: no file is looked at.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::plan {

struct ToolCacheSeed {
  std::string_view tool;              // a name of plan::kToolCacheEntries
  std::filesystem::path source;       // the host's cache (absolute)
  std::filesystem::path destination;  // relative, below cordon's cache directory
};

// In kToolCacheEntries order; a tool whose variable is set to something other than an
// absolute path (GOCACHE=off) and a caller without an absolute home give none for that source.
std::vector<ToolCacheSeed> HostToolCacheSeeds(const std::vector<std::string>& caller_env,
                                              const std::filesystem::path& caller_home);

}  // namespace cordon::plan
