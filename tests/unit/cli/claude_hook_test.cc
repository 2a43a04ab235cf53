// `cordon hook claude-code`'s answers (cli/claude_hook.h): a denial with the policy's reason, an
// allowed command rewritten to run through `cordon run` with its text intact, no opinion on
// tools that are not the shell, and an error (the hook then blocks) for input of another shape.
#include "cli/claude_hook.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cordon::cli {
namespace {

using nlohmann::json;

Policy DefaultPolicy() {
  Result<Policy> policy = Policy::Create(PolicyConfig{});
  EXPECT_TRUE(policy.has_value());
  return std::move(*policy);
}

json BashCall(std::string command) {
  return {
      {"hook_event_name", "PreToolUse"},
      {"tool_name", "Bash"},
      {"cwd", "/home/me/project/sub"},
      {"tool_input", {{"command", std::move(command)}, {"description", "d"}, {"timeout", 120000}}}};
}

const HookRewrite kRewrite{"/usr/bin/cordon", "", "/home/me/project"};

// What /bin/sh prints for `line`: the quoting is judged by a real shell, not by reading it.
std::string ShellSees(const std::string& line) {
  FILE* pipe = ::popen(line.c_str(), "r");
  std::string out;
  char buffer[256];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  if (pipe != nullptr) ::pclose(pipe);
  return out;
}

TEST(ClaudeHook, APolicyDenialIsTheHooksDenialWithTheReason) {
  Result<json> answer = AnswerPreToolUse(BashCall("sudo id"), DefaultPolicy(), kRewrite);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  const json& out = (*answer)["hookSpecificOutput"];
  EXPECT_EQ(out["hookEventName"], "PreToolUse");
  EXPECT_EQ(out["permissionDecision"], "deny");
  EXPECT_NE(out["permissionDecisionReason"].get<std::string>().find("default.privilege"),
            std::string::npos);
  EXPECT_FALSE(out.contains("updatedInput"));
}

TEST(ClaudeHook, AnAllowedCommandIsRewrittenToRunInCordonAndKeepsItsOtherFields) {
  Result<json> answer = AnswerPreToolUse(BashCall("make -j2 test"), DefaultPolicy(), kRewrite);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  const json& out = (*answer)["hookSpecificOutput"];
  EXPECT_EQ(out["permissionDecision"], "allow");
  const json& updated = out["updatedInput"];
  EXPECT_EQ(updated["command"],
            "/usr/bin/cordon run --workspace /home/me/project -c 'make -j2 test'");
  EXPECT_EQ(updated["description"], "d");
  EXPECT_EQ(updated["timeout"], 120000);
}

TEST(ClaudeHook, TheConfigGivenToTheHookIsPassedOn) {
  const HookRewrite rewrite{"/opt/c/cordon", "/etc/team cordon.json", "/w"};
  Result<json> answer = AnswerPreToolUse(BashCall("ls"), DefaultPolicy(), rewrite);
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ((*answer)["hookSpecificOutput"]["updatedInput"]["command"],
            "/opt/c/cordon --config '/etc/team cordon.json' run --workspace /w -c ls");
}

// The rewritten command line, as /bin/sh reads it, hands `cordon run -c` the exact text.
TEST(ClaudeHook, TheShellGivesCordonTheExactText) {
  const HookRewrite rewrite{"/bin/echo", "", "/w"};  // coreutils' echo prints its words as given
  int checked = 0;
  for (const std::string text :
       {"plain", "it's", "'", "''", "a b\tc", "$HOME `id` $(id) \\ \" ; | & * ?", "end with quote'",
        "ünïcode ✓"}) {
    Result<json> answer = AnswerPreToolUse(BashCall(text), DefaultPolicy(), rewrite);
    ASSERT_TRUE(answer.has_value()) << text;
    const json& out = (*answer)["hookSpecificOutput"];
    if (out["permissionDecision"] != "allow") continue;  // the policy's to refuse, not quoting's
    ++checked;
    EXPECT_EQ(ShellSees(out["updatedInput"]["command"]), "run --workspace /w -c " + text + "\n")
        << text;
  }
  EXPECT_GE(checked, 6);
}

TEST(ClaudeHook, OtherToolsGetNoOpinion) {
  json read = {{"hook_event_name", "PreToolUse"},
               {"tool_name", "Read"},
               {"tool_input", {{"file_path", "/etc/passwd"}}}};
  Result<json> answer = AnswerPreToolUse(read, DefaultPolicy(), kRewrite);
  ASSERT_TRUE(answer.has_value());
  EXPECT_TRUE(answer->empty());
}

TEST(ClaudeHook, InputOfAnotherShapeIsAnError) {
  const Policy policy = DefaultPolicy();
  json no_command = BashCall("x");
  no_command["tool_input"].erase("command");
  json number_command = BashCall("x");
  number_command["tool_input"]["command"] = 7;
  json post = BashCall("ls");
  post["hook_event_name"] = "PostToolUse";
  json no_tool = BashCall("ls");
  no_tool.erase("tool_name");
  for (const json& input :
       {json::array(), json("text"), no_command, number_command, post, no_tool}) {
    EXPECT_FALSE(AnswerPreToolUse(input, policy, kRewrite).has_value()) << input.dump();
  }
  // The Bash call is judged only with a project to fence it in.
  EXPECT_FALSE(AnswerPreToolUse(BashCall("ls"), policy, {"/usr/bin/cordon", "", ""}).has_value());
}

}  // namespace
}  // namespace cordon::cli
