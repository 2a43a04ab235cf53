#include "plan/tool_caches.h"

#include <fmt/format.h>

#include <cstdint>

namespace cordon::plan {

std::optional<std::filesystem::path> ToolCachesRoot(const std::vector<std::string>& caller_env,
                                                    const std::filesystem::path& caller_home) {
  constexpr std::string_view kXdg = "XDG_CACHE_HOME=";
  std::filesystem::path base;
  for (const std::string& entry : caller_env) {
    // The first definition is the one getenv() finds.
    if (entry.starts_with(kXdg)) {
      base = entry.substr(kXdg.size());
      break;
    }
  }
  // The XDG rule: a relative value is ignored.
  if (!base.is_absolute()) {
    if (!caller_home.is_absolute()) return std::nullopt;
    base = caller_home / ".cache";
  }
  return (base / "cordon" / "tool-caches").lexically_normal();
}

std::optional<std::filesystem::path> ToolCacheDirectory(ToolCaches setting,
                                                        const std::filesystem::path& root,
                                                        const std::filesystem::path& workspace) {
  switch (setting) {
    case ToolCaches::kShared:
      return root / "shared";
    case ToolCaches::kWorkspace:
      return root / "workspaces" / WorkspaceKey(workspace) / "cache";
    case ToolCaches::kOff:
      break;
  }
  return std::nullopt;
}

std::string WorkspaceKey(const std::filesystem::path& workspace) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : workspace.string()) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

std::vector<std::string> ToolCacheVariables(const std::filesystem::path& directory) {
  std::vector<std::string> variables;
  for (const ToolCacheEntry& entry : kToolCacheEntries) {
    variables.push_back(fmt::format("{}={}{}", entry.variable, entry.prefix,
                                    (directory / entry.directory).string()));
  }
  return variables;
}

}  // namespace cordon::plan
