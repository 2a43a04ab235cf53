#include "cli/shell_hook.h"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/shell_quote.h"

namespace cordon::cli {

using nlohmann::json;

namespace {

struct AgentShape {
  std::string_view name;                        // the hook's subcommand
  std::string_view event;                       // hook_event_name
  std::array<std::string_view, 2> shell_tools;  // tools whose tool_input.command is a shell line
  // tool_input fields dropped from the rewritten call: ones that would ask the agent to lift a
  // sandbox of its own for a command that now runs in cordon's.
  std::array<std::string_view, 1> dropped;
};

constexpr AgentShape kClaude{
    "claude-code", "PreToolUse", {"Bash", "Monitor"}, {"dangerouslyDisableSandbox"}};
constexpr AgentShape kGemini{"gemini-cli", "BeforeTool", {"run_shell_command", ""}, {""}};

const AgentShape& Shape(HookAgent agent) {
  return agent == HookAgent::kClaudeCode ? kClaude : kGemini;
}

bool IsShellTool(const AgentShape& shape, const std::string& tool) {
  for (std::string_view shell : shape.shell_tools) {
    if (!shell.empty() && tool == shell) return true;
  }
  return false;
}

json Deny(HookAgent agent, std::string reason) {
  if (agent == HookAgent::kGeminiCli)
    return json{{"decision", "deny"}, {"reason", std::move(reason)}};
  return json{{"hookSpecificOutput",
               {{"hookEventName", "PreToolUse"},
                {"permissionDecision", "deny"},
                {"permissionDecisionReason", std::move(reason)}}}};
}

json Allow(HookAgent agent, json tool_input, std::string_view decision = "allow",
           std::string reason = "cordon runs this command in its sandbox") {
  if (agent == HookAgent::kGeminiCli) {
    return json{{"decision", "allow"},
                {"reason", reason},
                {"hookSpecificOutput",
                 {{"hookEventName", "BeforeTool"}, {"tool_input", std::move(tool_input)}}}};
  }
  // allow: no prompt of Claude Code's own for a command that runs in the sandbox.
  return json{{"hookSpecificOutput",
               {{"hookEventName", "PreToolUse"},
                {"permissionDecision", decision},
                {"permissionDecisionReason", reason},
                {"updatedInput", std::move(tool_input)}}}};
}

}  // namespace

const char* ProjectDirVariable(HookAgent agent) {
  return agent == HookAgent::kClaudeCode ? "CLAUDE_PROJECT_DIR" : "GEMINI_PROJECT_DIR";
}

std::size_t JsonNestingDepth(std::string_view text) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Result<json> AnswerShellHook(HookAgent agent, const json& input, const Policy& policy,
                             const HookRewrite& rewrite, const ClaudeRules& claude_rules) {
  const AgentShape& shape = Shape(agent);
  if (!input.is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "the hook input is not a JSON object");
  }
  const auto event = input.find("hook_event_name");
  if (event != input.end() && (!event->is_string() || *event != shape.event)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("hook_event_name is {}, not {}: register `cordon hook {}` under {}",
                            event->dump(-1, ' ', false, json::error_handler_t::replace),
                            shape.event, shape.name, shape.event));
  }
  const auto tool = input.find("tool_name");
  if (tool == input.end() || !tool->is_string()) {
    return Fail(ErrorCode::kInvalidArgument, "the hook input has no tool_name string");
  }
  // Only the shell tools run commands; other tools are not cordon's to judge.
  if (!IsShellTool(shape, tool->get<std::string>())) return json::object();
  const auto tool_input = input.find("tool_input");
  if (tool_input == input.end() || !tool_input->is_object() || !tool_input->contains("command") ||
      !(*tool_input)["command"].is_string()) {
    return Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("the {} call's tool_input has no command string", tool->get<std::string>()));
  }
  if (rewrite.workspace.empty() || rewrite.workspace.front() != '/') {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("no absolute project directory: {} is unset or relative and the "
                            "input's cwd is not absolute",
                            ProjectDirVariable(agent)));
  }
  const std::string& text = (*tool_input)["command"].get_ref<const std::string&>();

  const Decision verdict = policy.Evaluate(text);
  if (!verdict.allowed()) {
    return Deny(agent, fmt::format("cordon's command policy refused this command [{}]: {}",
                                   verdict.rule_id, verdict.reason));
  }
  // Claude Code's own rules, which after the rewrite would see `cordon run ...` instead.
  std::optional<std::string> ask_rule;
  if (agent == HookAgent::kClaudeCode) {
    if (std::optional<std::string> rule = MatchingRule(claude_rules.deny, text)) {
      return Deny(agent,
                  fmt::format("Claude Code's permission rule {} denies this command", *rule));
    }
    ask_rule = MatchingRule(claude_rules.ask, text);
  }
  if (!rewrite.sandboxed) return json::object();  // sandbox off: the agent's own prompts apply
  std::vector<std::string> argv = {rewrite.cordon};
  if (!rewrite.config_path.empty()) argv.push_back("--config=" + rewrite.config_path);
  argv.insert(argv.end(), {"run", "--workspace=" + rewrite.workspace, "-c", text});
  json updated = *tool_input;
  for (std::string_view field : shape.dropped) {
    if (!field.empty()) updated.erase(std::string(field));
  }
  updated["command"] = policy::ShellQuote(argv);
  if (ask_rule) {
    return Allow(agent, std::move(updated), "ask",
                 fmt::format("Claude Code's permission rule {} asks before this command; it runs "
                             "in cordon's sandbox",
                             *ask_rule));
  }
  return Allow(agent, std::move(updated));
}

}  // namespace cordon::cli
