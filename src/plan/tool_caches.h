// The tools' caches across commands (sandbox.tool_caches, decision 0041): a cordon-owned
// directory per user (or per workspace) that the sandbox binds writable and each tool finds
// through its own variable, so the second `npm ci`, `go test` or `cargo build` is warm while
// the host's own caches stay out of reach (decision 0002). Pure: paths and variables only; the
// session makes the directory (session/tool_cache_dir.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"

namespace cordon::plan {

// One tool's part of the cache directory and the variable that points the tool at it. A tool
// with two caches (go) has two entries under one name.
struct ToolCacheEntry {
  std::string_view tool;       // what `cordon cache clear TOOL` names
  std::string_view directory;  // below the cache directory
  std::string_view variable;   // the tool's own variable
  std::string_view prefix;     // written before the path in the variable's value
};

inline constexpr ToolCacheEntry kToolCacheEntries[] = {
    {"npm", "npm", "npm_config_cache", ""},
    {"yarn", "yarn", "YARN_CACHE_FOLDER", ""},
    {"pip", "pip", "PIP_CACHE_DIR", ""},
    {"uv", "uv", "UV_CACHE_DIR", ""},
    {"go", "go-build", "GOCACHE", ""},
    {"go", "go-mod", "GOMODCACHE", ""},
    // The registry index, the downloaded crates and git checkouts; CARGO_HOME/bin is not on the
    // PATH inside (the caller's ~/.cargo/bin is, read-only).
    {"cargo", "cargo", "CARGO_HOME", ""},
    {"maven", "maven", "MAVEN_OPTS", "-Dmaven.repo.local="},
    {"gradle", "gradle", "GRADLE_USER_HOME", ""},
    {"ccache", "ccache", "CCACHE_DIR", ""},
};

// Where cordon keeps the tools' caches of the caller: $XDG_CACHE_HOME/cordon/tool-caches, else
// <home>/.cache/cordon/tool-caches. None when neither is an absolute path.
std::optional<std::filesystem::path> ToolCachesRoot(const std::vector<std::string>& caller_env,
                                                    const std::filesystem::path& caller_home);

// The directory the sandbox binds for `workspace`: <root>/shared, or with kWorkspace
// <root>/workspaces/<WorkspaceKey>/cache (the workspace's path is kept beside it, outside the
// bind, in <root>/workspaces/<key>/workspace). None with kOff.
std::optional<std::filesystem::path> ToolCacheDirectory(ToolCaches setting,
                                                        const std::filesystem::path& root,
                                                        const std::filesystem::path& workspace);

// 16 hex digits naming a workspace's own cache, the same for the same canonical path on every
// machine and build (FNV-1a of the path).
std::string WorkspaceKey(const std::filesystem::path& workspace);

// "NAME=value" for each entry of kToolCacheEntries, pointing into `directory`.
std::vector<std::string> ToolCacheVariables(const std::filesystem::path& directory);

}  // namespace cordon::plan
