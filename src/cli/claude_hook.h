// Claude Code's PreToolUse hook for its own Bash tool (`cordon hook claude-code`; docs/mcp.md,
// "Claude Code's own Bash tool"): the command policy's denial becomes the hook's denial with the
// reason; an allowed command is rewritten to run through `cordon run`, so that Claude Code's own
// shell tool is fenced too. Pure: the hook's input, the policy and the rewrite's parts in; the
// hook's answer out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cordon/error.h"
#include "cordon/policy.h"

namespace cordon::cli {

struct HookRewrite {
  std::string cordon;       // the cordon executable the rewritten command runs
  std::string config_path;  // --config FILE given to the hook, passed on; empty: none
  std::string workspace;    // --workspace for `cordon run`: the project directory
};

// The hook's answer: JSON for stdout (an empty object: no opinion, the tool is not a shell).
// An error when the input is not a PreToolUse event of Claude Code's shape; the caller blocks
// the call with it (exit 2).
Result<nlohmann::json> AnswerPreToolUse(const nlohmann::json& input, const Policy& policy,
                                        const HookRewrite& rewrite);

}  // namespace cordon::cli
