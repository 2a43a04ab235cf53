// The git_commit tool of worktree mode (`cordon mcp --worktree`): commits every change in the
// linked worktree through git on the host, outside the sandbox, with hooks disabled
// (worktree::CommitAll). Listed and callable only in worktree mode.
//
// Refusals (empty message, nothing to commit, a failing git step) are tool results with
// isError, never JSON-RPC errors, so the model reads why.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "mcp/cancel_token.h"
#include "worktree/detect.h"

namespace cordon::mcp {

inline constexpr std::string_view kGitCommitTool = "git_commit";

// The tools/list entry (outputSchema and annotations from the versions that define them).
nlohmann::json GitCommitTool(std::string_view protocol_version);

// One call, from its arguments to the CallToolResult: {commit, summary} as structuredContent.
nlohmann::json GitCommitCall(const nlohmann::json& arguments,
                             const worktree::LinkedWorktree& worktree, const CancelToken& cancel);

}  // namespace cordon::mcp
