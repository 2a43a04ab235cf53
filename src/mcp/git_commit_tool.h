// The git_commit tool: commits every change in the workspace's working tree through git on the
// host, outside the sandbox, with hooks and the fsmonitor disabled (worktree::CommitAll).
// Listed and callable in every session whose .git the sandbox keeps read-only
// (worktree::CommitRoot) and in worktree mode (`cordon mcp --worktree`).
//
// Refusals (empty message, nothing to commit, a failing git step) are tool results with
// isError, never JSON-RPC errors, so the model reads why.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string_view>

#include "mcp/cancel_token.h"

namespace cordon::mcp {

inline constexpr std::string_view kGitCommitTool = "git_commit";

// The tools/list entry (outputSchema and annotations from the versions that define them).
nlohmann::json GitCommitTool(std::string_view protocol_version);

// One call, from its arguments to the CallToolResult: {commit, summary} as structuredContent.
nlohmann::json GitCommitCall(const nlohmann::json& arguments, const std::filesystem::path& root,
                             const CancelToken& cancel);

}  // namespace cordon::mcp
