// `cordon cache [status] | cordon cache clear [TOOL...]`: the tools' caches that cordon keeps
// across commands (sandbox.tool_caches, decision 0041) — where they are, how large, and
// emptying them. Only cordon's own caches: the host's are never read or touched here.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli/subcommands.h"
#include "config/load.h"
#include "core/file_tree.h"
#include "core/paths.h"
#include "plan/tool_caches.h"
#include "session/request.h"

namespace cordon::cli {
namespace {

struct CacheOptions {
  bool clear = false;
  std::vector<std::string> tools;
};

// A cache directory and, for a workspace's own, the workspace it was made for.
struct CacheDirectory {
  std::filesystem::path path;
  std::string workspace;  // empty: the shared one
};

// Every cache directory that exists below `root`: the shared one, then each workspace's.
std::vector<CacheDirectory> ExistingCaches(const std::filesystem::path& root) {
  std::vector<CacheDirectory> found;
  std::error_code ec;
  if (std::filesystem::is_directory(root / "shared", ec)) found.push_back({root / "shared", {}});
  for (const std::filesystem::path& entry : core::ListDirectory(root / "workspaces")) {
    if (!std::filesystem::is_directory(entry / "cache", ec)) continue;
    std::string workspace;
    std::getline(std::ifstream(entry / "workspace"), workspace);
    found.push_back({entry / "cache", workspace.empty() ? "(unknown)" : workspace});
  }
  return found;
}

std::string Size(std::uint64_t bytes) {
  if (bytes >= (1ULL << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ULL << 30));
  if (bytes >= (1ULL << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ULL << 20));
  return fmt::format("{} KiB", bytes / 1024);
}

// The tool names `cordon cache clear` accepts, in kToolCacheEntries order, each once.
std::vector<std::string_view> ToolNames() {
  std::vector<std::string_view> names;
  for (const plan::ToolCacheEntry& entry : plan::kToolCacheEntries) {
    if (std::find(names.begin(), names.end(), entry.tool) == names.end()) {
      names.push_back(entry.tool);
    }
  }
  return names;
}

int PrintStatus(const Config& config, const std::filesystem::path& root) {
  fmt::print("setting:   {}{}\n", ToolCachesName(config.sandbox.tool_caches),
             config.sandbox.mode == SandboxMode::kWorkspaceWrite
                 ? ""
                 : fmt::format(" (not used: mode is {})", SandboxModeName(config.sandbox.mode)));
  fmt::print("directory: {}\n", root.string());
  const std::vector<CacheDirectory> caches = ExistingCaches(root);
  if (caches.empty()) fmt::print("no cache made yet\n");
  for (const CacheDirectory& cache : caches) {
    Result<std::uint64_t> size = core::TreeSize(cache.path);
    fmt::print("{:<40} {}{}\n", cache.workspace.empty() ? "shared" : cache.workspace,
               size ? Size(*size) : fmt::format("size unknown ({})", size.error().message),
               cache.workspace.empty() ? "" : fmt::format("  ({})", cache.path.string()));
  }
  return 0;
}

int Clear(const std::filesystem::path& root, const std::vector<std::string>& tools) {
  const std::vector<std::string_view> known = ToolNames();
  for (const std::string& tool : tools) {
    if (std::find(known.begin(), known.end(), tool) != known.end()) continue;
    fmt::print(stderr, "cordon: cache clear: unknown tool \"{}\"; expected one of: {}\n", tool,
               fmt::join(known, ", "));
    return kExitSetupFailed;
  }
  std::uint64_t freed = 0;
  for (const CacheDirectory& cache : ExistingCaches(root)) {
    std::vector<std::filesystem::path> targets;
    if (tools.empty()) targets.push_back(cache.path);
    for (const plan::ToolCacheEntry& entry : plan::kToolCacheEntries) {
      if (std::find(tools.begin(), tools.end(), entry.tool) == tools.end()) continue;
      std::error_code ec;
      const std::filesystem::path part = cache.path / entry.directory;
      if (std::filesystem::is_directory(std::filesystem::symlink_status(part, ec))) {
        targets.push_back(part);
      }
    }
    for (const std::filesystem::path& target : targets) {
      Result<std::uint64_t> removed = core::RemoveTreeContents(target);
      if (!removed) {
        fmt::print(stderr, "cordon: cache clear: {}\n", removed.error().message);
        return kExitSetupFailed;
      }
      freed += *removed;
    }
  }
  fmt::print(
      "cleared {} ({} freed)\n",
      tools.empty() ? std::string("every tool cache") : fmt::format("{}", fmt::join(tools, ", ")),
      Size(freed));
  return 0;
}

int RunCache(const GlobalOptions& global, const CacheOptions& options) {
  auto config = LoadConfig(global, SandboxFlags{});
  if (!config) return ReportSetupError(config.error());
  const std::optional<std::filesystem::path> root =
      plan::ToolCachesRoot(session::CallerEnvironment(), session::CallerHome());
  if (!root) {
    fmt::print(stderr,
               "cordon: cache: no place for the tool caches: neither XDG_CACHE_HOME nor HOME is "
               "an absolute path\n");
    return kExitSetupFailed;
  }
  return options.clear ? Clear(*root, options.tools) : PrintStatus(*config, *root);
}

}  // namespace

Subcommand AddCacheCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "cache",
      "Show or clear the tools' caches cordon keeps across commands: status | clear [TOOL...]");
  app->require_subcommand(0, 1);  // none: status
  app->add_subcommand("status", "Show where the tool caches are and their size (the default)");
  auto options = std::make_shared<CacheOptions>();
  CLI::App* clear = app->add_subcommand(
      "clear",
      "Empty cordon's tool caches (all, or only the tools named); the host's own caches "
      "are never touched");
  clear->add_option("tool", options->tools,
                    fmt::format("A tool whose cache to empty: {}", fmt::join(ToolNames(), ", ")));
  return {app, [&global, app, options] {
            CacheOptions chosen = *options;
            chosen.clear = false;
            for (const CLI::App* sub : app->get_subcommands()) {
              if (sub->get_name() == "clear") chosen.clear = true;
            }
            return RunCache(global, chosen);
          }};
}

}  // namespace cordon::cli
