#include "cli/claude_hook.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "policy/shell_quote.h"

namespace cordon::cli {

using nlohmann::json;

namespace {

json HookDecision(std::string_view decision, std::string reason, json updated_input = nullptr) {
  json specific = {{"hookEventName", "PreToolUse"},
                   {"permissionDecision", decision},
                   {"permissionDecisionReason", std::move(reason)}};
  if (!updated_input.is_null()) specific["updatedInput"] = std::move(updated_input);
  return json{{"hookSpecificOutput", std::move(specific)}};
}

}  // namespace

Result<json> AnswerPreToolUse(const json& input, const Policy& policy, const HookRewrite& rewrite) {
  if (!input.is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "the hook input is not a JSON object");
  }
  const auto event = input.find("hook_event_name");
  if (event != input.end() && (!event->is_string() || *event != "PreToolUse")) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("hook_event_name is {}, not PreToolUse: register `cordon hook "
                            "claude-code` under PreToolUse",
                            event->dump()));
  }
  const auto tool = input.find("tool_name");
  if (tool == input.end() || !tool->is_string()) {
    return Fail(ErrorCode::kInvalidArgument, "the hook input has no tool_name string");
  }
  // Only the shell tool runs commands; other tools are not cordon's to judge.
  if (*tool != "Bash") return json::object();
  const auto tool_input = input.find("tool_input");
  if (tool_input == input.end() || !tool_input->is_object() || !tool_input->contains("command") ||
      !(*tool_input)["command"].is_string()) {
    return Fail(ErrorCode::kInvalidArgument, "the Bash call's tool_input has no command string");
  }
  if (rewrite.workspace.empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "neither CLAUDE_PROJECT_DIR nor the input's cwd names the project");
  }
  const std::string& text = (*tool_input)["command"].get_ref<const std::string&>();

  const Decision verdict = policy.Evaluate(text);
  if (!verdict.allowed()) {
    return HookDecision("deny", fmt::format("cordon's command policy refused this command "
                                            "[{}]: {}",
                                            verdict.rule_id, verdict.reason));
  }
  std::vector<std::string> argv = {rewrite.cordon};
  if (!rewrite.config_path.empty()) argv.insert(argv.end(), {"--config", rewrite.config_path});
  argv.insert(argv.end(), {"run", "--workspace", rewrite.workspace, "-c", text});
  json updated = *tool_input;
  updated["command"] = policy::ShellQuote(argv);
  // allow: no prompt of Claude Code's own for a command that runs in the sandbox; its deny and
  // ask rules still apply, and come first.
  return HookDecision("allow", "cordon runs this command in its sandbox", std::move(updated));
}

}  // namespace cordon::cli
