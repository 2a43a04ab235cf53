#include "config/host_run_files.h"

#include <algorithm>
#include <array>

namespace cordon::config {
namespace {

// docs/host-run-files.md has the source of each entry.
constexpr std::array<std::string_view, 35> kBuiltIn = {
    // Coding agents: settings, hooks, commands, skills, MCP servers, plugins.
    ".claude/",
    ".mcp.json",
    ".codex/",
    ".gemini/",
    ".cursor/",
    ".windsurf/",
    ".continue/",
    ".continuerc.json",
    ".aider.conf.yml",
    ".clinerules/hooks/",
    ".opencode/",
    "opencode.json",
    "opencode.jsonc",
    ".github/hooks/",
    // Editors: tasks, launch and debug configurations, settings naming executables.
    ".vscode/",
    ".zed/",
    ".idea/",
    ".run/",
    ".devcontainer/",
    ".devcontainer.json",
    // Shell environment managers: scripts run on `cd`, tasks, hooks.
    ".envrc",
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    ".mise/",
    "mise/config.toml",
    ".config/mise.toml",
    ".config/mise/",
    "mise-tasks/",
    ".mise-tasks/",
    // git hook directories and managers, and git's own list of where to fetch submodules from.
    ".husky/",
    ".githooks/",
    ".pre-commit-config.yaml",
    ".gitmodules",
};

constexpr std::size_t kMaxName = 255;
constexpr std::size_t kMaxEntry = 1024;

std::string_view WithoutSlash(std::string_view entry) {
  while (entry.size() > 1 && entry.back() == '/') entry.remove_suffix(1);
  return entry;
}

}  // namespace

std::span<const std::string_view> BuiltInHostRunFiles() { return kBuiltIn; }

std::string HostRunEntryProblem(std::string_view entry) {
  if (entry.empty()) return "an empty entry names nothing";
  if (entry.size() > kMaxEntry) return "longer than 1024 bytes";
  if (entry.find('\0') != std::string_view::npos) return "contains a NUL character";
  if (entry.front() == '/') {
    return "an absolute path: entries are relative to each writable root (hide or leave "
           "outside a writable root what lies elsewhere)";
  }
  std::string_view rest = entry;
  if (rest.back() == '/') rest.remove_suffix(1);
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view name = rest.substr(0, slash);
    if (name.empty()) return "contains an empty path component (\"//\")";
    if (name == "." || name == "..") return "contains a \".\" or \"..\" component";
    if (name.size() > kMaxName) return "has a component longer than 255 bytes";
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return "";
}

bool SameHostRunEntry(std::string_view a, std::string_view b) {
  return WithoutSlash(a) == WithoutSlash(b);
}

std::vector<std::string> HostRunFiles(const SandboxConfig& config) {
  std::vector<std::string> entries;
  if (!config.protect_host_run_files || config.mode != SandboxMode::kWorkspaceWrite) {
    return entries;
  }
  auto listed = [&](const std::vector<std::string>& list, std::string_view entry) {
    return std::any_of(list.begin(), list.end(),
                       [&](const std::string& other) { return SameHostRunEntry(other, entry); });
  };
  for (std::string_view entry : kBuiltIn) {
    if (!listed(config.host_run_files.remove, entry)) entries.emplace_back(entry);
  }
  for (const std::string& entry : config.host_run_files.add) {
    if (!listed(entries, entry)) entries.push_back(entry);
  }
  return entries;
}

}  // namespace cordon::config
