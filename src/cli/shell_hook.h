// An agent's hook before its own shell tool runs (`cordon hook claude-code|gemini-cli`;
// docs/mcp.md, "The agent's own shell tool"): the command policy's denial becomes the hook's
// denial with the reason; an allowed command is rewritten to run through `cordon run`, so that
// the agent's built-in shell is fenced as cordon's MCP tool is. Pure: the event, the policy and
// the rewrite's parts in; the hook's answer out, in the agent's own shape.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/claude_rules.h"
#include "cordon/error.h"
#include "cordon/policy.h"

namespace cordon::cli {

enum class HookAgent {
  kClaudeCode,  // PreToolUse; Bash and Monitor; hookSpecificOutput.permissionDecision
  kGeminiCli,   // BeforeTool; run_shell_command; decision, hookSpecificOutput.tool_input
};

struct HookRewrite {
  std::string cordon;       // the cordon executable the rewritten command runs
  std::string config_path;  // --config FILE given to the hook (absolute), passed on; or empty
  std::string workspace;    // --workspace for `cordon run`: the project directory (absolute)
  // False when the config's sandbox mode is off: the policy still refuses, but an allowed
  // command is left to the agent's own permission flow, not approved as sandboxed.
  bool sandboxed = true;
};

// The hook's answer: JSON for stdout (an empty object: no opinion, the tool is not a shell).
// An error when the input is not the agent's pre-tool event in its shape; the caller blocks the
// call with it (exit 2).
// `claude_rules`: Claude Code's own Bash permission rules (claude_rules.h), applied to the
// model's command after cordon's policy: a deny rule denies, an ask rule asks (with the
// rewritten command). Ignored for other agents.
Result<nlohmann::json> AnswerShellHook(HookAgent agent, const nlohmann::json& input,
                                       const Policy& policy, const HookRewrite& rewrite,
                                       const ClaudeRules& claude_rules = {});

// The deepest nesting of arrays and objects in JSON text (strings skipped), read without
// parsing it: deep nesting is refused before it reaches a recursive copy.
std::size_t JsonNestingDepth(std::string_view text);

// The project directory the agent names for its hooks (CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR).
const char* ProjectDirVariable(HookAgent agent);

}  // namespace cordon::cli
