// The workspace files through which a program on the host later runs code or loads tool
// definitions: agent settings and hooks, MCP server lists, editor tasks, direnv and mise
// configs, devcontainers, git's submodule list. A sandboxed command that rewrote one would run
// its code on the host, outside the sandbox, the next time the agent, the editor or the shell
// reads it; protect_host_run_files keeps them read-only in every writable root. The research
// behind the list, tool by tool, and what was left out and why: docs/host-run-files.md.
//
// Entries are spelled as in the config: a path relative to a writable root, with a trailing
// "/" for a directory (".claude/", ".mcp.json", ".github/hooks/").
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"

namespace cordon::config {

// The built-in entries, in the order cordon reports them.
std::span<const std::string_view> BuiltInHostRunFiles();

// Why `entry` is not a usable entry ("" when it is): it must be relative, made of plain names
// (no "", ".", ".." component, no NUL), at most 255 bytes per name and 1024 in all.
std::string HostRunEntryProblem(std::string_view entry);

// Two spellings of one entry: equal once a trailing "/" is dropped (".idea" and ".idea/").
bool SameHostRunEntry(std::string_view a, std::string_view b);

// The entries `config` protects: the built-in ones minus `remove`, then `add`, without
// repeats; empty when protect_host_run_files is off or the mode has no writable root.
std::vector<std::string> HostRunFiles(const SandboxConfig& config);

}  // namespace cordon::config
