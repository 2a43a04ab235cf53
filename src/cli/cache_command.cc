// `cordon cache [status] | clear [TOOL...] | seed [TOOL...]`: the tools' caches that cordon
// keeps across commands (sandbox.tool_caches, decision 0041) — where they are, how large,
// emptying them, and filling them from the host's own caches (decision 0049), which are only
// ever read.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cli/subcommands.h"
#include "config/load.h"
#include "core/file_tree.h"
#include "core/paths.h"
#include "core/tree_copy.h"
#include "plan/tool_cache_seeds.h"
#include "plan/tool_caches.h"
#include "session/request.h"
#include "session/tool_cache_dir.h"

namespace cordon::cli {
namespace {

enum class CacheAction { kStatus, kClear, kSeed };

struct CacheOptions {
  CacheAction action = CacheAction::kStatus;
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

// False (with the message printed) when `tools` names one cordon keeps no cache for.
bool KnownTools(const char* verb, const std::vector<std::string>& tools) {
  const std::vector<std::string_view> known = ToolNames();
  for (const std::string& tool : tools) {
    if (std::find(known.begin(), known.end(), tool) != known.end()) continue;
    fmt::print(stderr, "cordon: cache {}: unknown tool \"{}\"; expected one of: {}\n", verb, tool,
               fmt::join(known, ", "));
    return false;
  }
  return true;
}

bool Named(const std::vector<std::string>& tools, std::string_view tool) {
  return tools.empty() || std::find(tools.begin(), tools.end(), tool) != tools.end();
}

int Clear(const std::filesystem::path& root, const std::vector<std::string>& tools) {
  if (!KnownTools("clear", tools)) return kExitSetupFailed;
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

// Copies what the host's own caches have into the cache the next command binds (the shared
// one, or with `workspace` the current directory's), never replacing an entry that is there.
int Seed(const Config& config, const std::filesystem::path& root,
         const std::vector<std::string>& tools) {
  if (!KnownTools("seed", tools)) return kExitSetupFailed;
  if (config.sandbox.mode != SandboxMode::kWorkspaceWrite ||
      config.sandbox.tool_caches == ToolCaches::kOff) {
    fmt::print(stderr,
               "cordon: cache seed: no tool cache to seed: {}; set sandbox.tool_caches to shared "
               "or workspace with mode workspace_write\n",
               config.sandbox.tool_caches == ToolCaches::kOff
                   ? std::string("sandbox.tool_caches is off")
                   : fmt::format("mode is {}", SandboxModeName(config.sandbox.mode)));
    return kExitSetupFailed;
  }
  const std::vector<std::string> env = session::CallerEnvironment();
  const std::filesystem::path home = session::CallerHome();
  Result<std::filesystem::path> workspace = core::Canonical(std::filesystem::current_path());
  if (!workspace) return ReportSetupError(workspace.error());
  const std::filesystem::path cache =
      session::PrepareToolCache(config.sandbox, env, home, *workspace);
  if (cache.empty()) {
    fmt::print(stderr,
               "cordon: cache seed: cannot make the tool cache below {} (a read-only home, or a "
               "directory of another user)\n",
               root.string());
    return kExitSetupFailed;
  }
  std::error_code root_ec;
  const std::filesystem::path real_root = std::filesystem::weakly_canonical(root, root_ec);
  const std::filesystem::path real_home = std::filesystem::weakly_canonical(home, root_ec);
  bool failed = false;
  for (const plan::ToolCacheSeed& seed : plan::HostToolCacheSeeds(env, home)) {
    if (!Named(tools, seed.tool)) continue;
    // The home's own path may hold links (/home -> /usr/home); below it none is followed: a
    // tool's variable may name a project directory a sandboxed command wrote.
    const std::filesystem::path source = core::IsWithin(seed.source, home) && !real_home.empty()
                                             ? real_home / seed.source.lexically_relative(home)
                                             : seed.source;
    const std::string from = source.string();
    // cordon's own caches (what sandboxed commands wrote) are never a source, nor a tree
    // that holds them.
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::weakly_canonical(source, ec);
    if (core::IsWithin(real, real_root) || core::IsWithin(real_root, real)) {
      fmt::print("{:<7} {}: cordon's own cache, left out\n", seed.tool, from);
      continue;
    }
    if (!std::filesystem::exists(std::filesystem::symlink_status(source, ec))) {
      fmt::print("{:<7} {}: none on the host\n", seed.tool, from);
      continue;
    }
    Result<core::CopyCounts> copied = core::CopyMissing(source, cache, seed.destination);
    if (!copied) {
      const std::string& why = copied.error().message;
      const bool link = why.find("symbolic link") != std::string::npos ||
                        why.find("Not a directory") != std::string::npos;
      fmt::print(stderr, "cordon: cache seed: {}{}\n", why,
                 link ? " (a symbolic link in a host cache's path below the home is not "
                        "followed: a sandboxed command may have planted it; name the directory "
                        "it leads to in the tool's variable)"
                      : "");
      failed = true;
      continue;
    }
    fmt::print("{:<7} {}: {} {} ({}) copied, {} already there{}\n", seed.tool, from, copied->files,
               copied->files == 1 ? "file" : "files", Size(copied->bytes), copied->kept,
               copied->skipped == 0
                   ? ""
                   : fmt::format(", {} left out (links, special files, places not writable)",
                                 copied->skipped));
  }
  fmt::print("into {}\n", cache.string());
  return failed ? kExitSetupFailed : 0;
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
  switch (options.action) {
    case CacheAction::kClear:
      return Clear(*root, options.tools);
    case CacheAction::kSeed:
      return Seed(*config, *root, options.tools);
    case CacheAction::kStatus:
      break;
  }
  return PrintStatus(*config, *root);
}

}  // namespace

Subcommand AddCacheCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "cache",
      "Show, clear or seed the tools' caches cordon keeps across commands: status | clear "
      "[TOOL...] | seed [TOOL...]");
  app->require_subcommand(0, 1);  // none: status
  app->add_subcommand("status", "Show where the tool caches are and their size (the default)");
  auto options = std::make_shared<CacheOptions>();
  CLI::App* clear = app->add_subcommand(
      "clear",
      "Empty cordon's tool caches (all, or only the tools named); the host's own caches "
      "are never touched");
  clear->add_option("tool", options->tools,
                    fmt::format("A tool whose cache to empty: {}", fmt::join(ToolNames(), ", ")));
  CLI::App* seed = app->add_subcommand(
      "seed",
      "Copy what the host's own caches have into cordon's (all tools, or only those named), "
      "so an offline install works under network deny; the host's caches are only read, and "
      "nothing in cordon's cache is replaced");
  seed->add_option("tool", options->tools,
                   fmt::format("A tool whose cache to seed: {}", fmt::join(ToolNames(), ", ")));
  return {app, [&global, app, options] {
            CacheOptions chosen = *options;
            chosen.action = CacheAction::kStatus;
            for (const CLI::App* sub : app->get_subcommands()) {
              if (sub->get_name() == "clear") chosen.action = CacheAction::kClear;
              if (sub->get_name() == "seed") chosen.action = CacheAction::kSeed;
            }
            return RunCache(global, chosen);
          }};
}

}  // namespace cordon::cli
