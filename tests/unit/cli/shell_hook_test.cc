// The hooks' answers (cli/shell_hook.h): a denial with the policy's reason, an allowed command
// rewritten to run through `cordon run` with its text intact, in Claude Code's and Gemini CLI's
// shapes; no opinion on tools that are not a shell; an error (the hook then blocks) for input of
// another shape.
#include "cli/shell_hook.h"

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

json Call(std::string tool, std::string command, std::string event = "PreToolUse") {
  return {
      {"hook_event_name", std::move(event)},
      {"tool_name", std::move(tool)},
      {"cwd", "/home/me/project/sub"},
      {"tool_input", {{"command", std::move(command)}, {"description", "d"}, {"timeout", 120000}}}};
}
json BashCall(std::string command) { return Call("Bash", std::move(command)); }

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

json Answer(const json& input, const HookRewrite& rewrite = kRewrite,
            HookAgent agent = HookAgent::kClaudeCode) {
  Result<json> answer = AnswerShellHook(agent, input, DefaultPolicy(), rewrite);
  EXPECT_TRUE(answer.has_value()) << (answer ? "" : answer.error().message);
  return answer ? *answer : json();
}

TEST(ShellHook, APolicyDenialIsTheHooksDenialWithTheReason) {
  const json out = Answer(BashCall("sudo id"))["hookSpecificOutput"];
  EXPECT_EQ(out["hookEventName"], "PreToolUse");
  EXPECT_EQ(out["permissionDecision"], "deny");
  EXPECT_NE(out["permissionDecisionReason"].get<std::string>().find("default.privilege"),
            std::string::npos);
  EXPECT_FALSE(out.contains("updatedInput"));
}

TEST(ShellHook, AnAllowedCommandIsRewrittenToRunInCordonAndKeepsItsOtherFields) {
  const json out = Answer(BashCall("make -j2 test"))["hookSpecificOutput"];
  EXPECT_EQ(out["permissionDecision"], "allow");
  const json& updated = out["updatedInput"];
  EXPECT_EQ(updated["command"],
            "/usr/bin/cordon run --workspace=/home/me/project -c 'make -j2 test'");
  EXPECT_EQ(updated["description"], "d");
  EXPECT_EQ(updated["timeout"], 120000);
}

// Claude Code's Monitor tool runs a shell command too; a request to lift Claude Code's own
// sandbox is dropped from a call that now runs in cordon's.
TEST(ShellHook, MonitorIsFencedAndTheSandboxBypassFieldDropped) {
  json monitor = Call("Monitor", "tail -f log");
  EXPECT_EQ(Answer(monitor)["hookSpecificOutput"]["permissionDecision"], "allow");
  json bash = BashCall("ls");
  bash["tool_input"]["dangerouslyDisableSandbox"] = true;
  EXPECT_FALSE(
      Answer(bash)["hookSpecificOutput"]["updatedInput"].contains("dangerouslyDisableSandbox"));
}

TEST(ShellHook, GeminiCliGetsItsOwnShape) {
  const json denied =
      Answer(Call("run_shell_command", "sudo id", "BeforeTool"), kRewrite, HookAgent::kGeminiCli);
  EXPECT_EQ(denied["decision"], "deny");
  EXPECT_NE(denied["reason"].get<std::string>().find("default.privilege"), std::string::npos);
  const json allowed =
      Answer(Call("run_shell_command", "ls", "BeforeTool"), kRewrite, HookAgent::kGeminiCli);
  EXPECT_EQ(allowed["decision"], "allow");
  EXPECT_EQ(allowed["hookSpecificOutput"]["tool_input"]["command"],
            "/usr/bin/cordon run --workspace=/home/me/project -c ls");
  // Claude Code's tool names are not Gemini CLI's shell, nor the reverse.
  EXPECT_TRUE(Answer(Call("Bash", "ls", "BeforeTool"), kRewrite, HookAgent::kGeminiCli).empty());
  EXPECT_TRUE(Answer(Call("run_shell_command", "ls")).empty());
}

// Sandbox mode off: the policy still refuses, but nothing is approved as sandboxed.
TEST(ShellHook, WithTheSandboxOffAnAllowedCommandGetsNoOpinion) {
  HookRewrite off = kRewrite;
  off.sandboxed = false;
  EXPECT_TRUE(Answer(BashCall("ls"), off).empty());
  EXPECT_EQ(Answer(BashCall("sudo id"), off)["hookSpecificOutput"]["permissionDecision"], "deny");
}

// Claude Code's own rules would see only `cordon run ...` after the rewrite: the hook applies
// them to the model's command first.
TEST(ShellHook, ClaudeCodesOwnDenyAndAskRulesStillHold) {
  ClaudeRules rules;
  rules.deny = {"Bash(git push:*)"};
  rules.ask = {"Bash(npm publish:*)"};
  const Policy policy = DefaultPolicy();
  auto answer = [&](const std::string& command) {
    Result<json> got =
        AnswerShellHook(HookAgent::kClaudeCode, BashCall(command), policy, kRewrite, rules);
    EXPECT_TRUE(got.has_value());
    return got ? (*got)["hookSpecificOutput"] : json();
  };
  const json denied = answer("make && git push origin main");
  EXPECT_EQ(denied["permissionDecision"], "deny");
  EXPECT_NE(denied["permissionDecisionReason"].get<std::string>().find("Bash(git push:*)"),
            std::string::npos);
  const json asked = answer("npm publish");
  EXPECT_EQ(asked["permissionDecision"], "ask");
  EXPECT_NE(asked["updatedInput"]["command"].get<std::string>().find(" run --workspace="),
            std::string::npos);
  EXPECT_EQ(answer("git status")["permissionDecision"], "allow");
  // Gemini CLI has no such rules: they are not applied to it.
  EXPECT_EQ(
      AnswerShellHook(HookAgent::kGeminiCli, Call("run_shell_command", "git push", "BeforeTool"),
                      policy, kRewrite, rules)
          ->at("decision"),
      "allow");
}

TEST(ShellHook, TheConfigGivenToTheHookIsPassedOn) {
  const HookRewrite rewrite{"/opt/c/cordon", "/etc/team cordon.json", "/w"};
  EXPECT_EQ(Answer(BashCall("ls"), rewrite)["hookSpecificOutput"]["updatedInput"]["command"],
            "/opt/c/cordon '--config=/etc/team cordon.json' run --workspace=/w -c ls");
}

// The rewritten command line, as /bin/sh reads it, hands `cordon run -c` the exact text.
TEST(ShellHook, TheShellGivesCordonTheExactText) {
  const HookRewrite rewrite{"/bin/echo", "", "/w"};  // coreutils' echo prints its words as given
  int checked = 0;
  for (const std::string text :
       {"plain", "it's", "'", "''", "a b\tc", "$HOME `id` $(id) \\ \" ; | & * ?", "end with quote'",
        "ünïcode ✓", "--unsafe", "-c"}) {
    const json out = Answer(BashCall(text), rewrite)["hookSpecificOutput"];
    if (out["permissionDecision"] != "allow") continue;  // the policy's to refuse, not quoting's
    ++checked;
    EXPECT_EQ(ShellSees(out["updatedInput"]["command"]), "run --workspace=/w -c " + text + "\n")
        << text;
  }
  EXPECT_GE(checked, 8);
}

TEST(ShellHook, OtherToolsGetNoOpinion) {
  json read = {{"hook_event_name", "PreToolUse"},
               {"tool_name", "Read"},
               {"tool_input", {{"file_path", "/etc/passwd"}}}};
  EXPECT_TRUE(Answer(read).empty());
  EXPECT_TRUE(Answer(Call("bash", "id")).empty());  // names are exact
}

TEST(ShellHook, InputOfAnotherShapeIsAnError) {
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
    EXPECT_FALSE(AnswerShellHook(HookAgent::kClaudeCode, input, policy, kRewrite).has_value())
        << input.dump();
  }
  // The Bash call is judged only with an absolute project to fence it in.
  for (const char* workspace : {"", "relative/dir", "-c"}) {
    EXPECT_FALSE(AnswerShellHook(HookAgent::kClaudeCode, BashCall("ls"), policy,
                                 {"/usr/bin/cordon", "", workspace})
                     .has_value())
        << workspace;
  }
}

TEST(ShellHook, NestingDepthIsReadWithoutParsing) {
  EXPECT_EQ(JsonNestingDepth("{}"), 1u);
  EXPECT_EQ(JsonNestingDepth(R"({"a":[{"b":1}],"c":"[[[[{{{"})"), 3u);
  EXPECT_EQ(JsonNestingDepth(R"({"a":"\"[[[[","b":[[]]})"), 3u);
  EXPECT_EQ(JsonNestingDepth(std::string(100000, '[')), 100000u);
}

}  // namespace
}  // namespace cordon::cli
