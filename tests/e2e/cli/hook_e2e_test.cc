// `cordon hook claude-code` as Claude Code runs it: the event on stdin, the answer on stdout,
// exit 2 (block, reason on stderr) for whatever it cannot judge, and never another status: that
// would let Claude Code run the original command unfenced (docs/mcp.md).
#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using HookCommand = CliTest;
using nlohmann::json;

std::string BashEvent(const std::string& command, const std::string& cwd) {
  return json{{"session_id", "s"},
              {"hook_event_name", "PreToolUse"},
              {"tool_name", "Bash"},
              {"cwd", cwd},
              {"tool_input", {{"command", command}, {"description", "d"}}}}
      .dump();
}

class Hook : public HookCommand {
 protected:
  Outcome Answer(const std::string& event,
                 std::initializer_list<std::string> args = {"hook", "claude-code"}) const {
    Invocation inv = CordonInvocation(args, {"CLAUDE_PROJECT_DIR=" + workspace_.string()});
    inv.stdin_data = event;
    return RunBinary(inv);
  }
};

TEST_F(Hook, DeniesWhatThePolicyDeniesWithTheRule) {
  Outcome o = Answer(BashEvent("sudo id", workspace_.string()));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json out = json::parse(o.out)["hookSpecificOutput"];
  EXPECT_EQ(out["permissionDecision"], "deny");
  EXPECT_NE(out["permissionDecisionReason"].get<std::string>().find("default.privilege"),
            std::string::npos);
}

// The allowed twin: rewritten into a `cordon run` that /bin/sh runs as Claude Code's shell would,
// with the original text intact and the project as the workspace.
TEST_F(Hook, RewritesAnAllowedCommandIntoACordonRunThatRunsIt) {
  Outcome o = Answer(BashEvent("printf '%s' \"it's here\" > made.txt", workspace_.string()));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json out = json::parse(o.out)["hookSpecificOutput"];
  EXPECT_EQ(out["permissionDecision"], "allow");
  const std::string command = out["updatedInput"]["command"];
  EXPECT_NE(command.find(" run --workspace=" + workspace_.string() + " -c "), std::string::npos)
      << command;
  EXPECT_EQ(out["updatedInput"]["description"], "d");

  Invocation shell = CordonInvocation({});
  shell.argv = {"/bin/sh", "-c", command};
  Outcome ran = RunBinary(shell);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ReadFile(workspace_ / "made.txt"), "it's here");
}

TEST_F(Hook, BlocksInputItCannotRead) {
  for (const std::string& bad : {std::string("not json"), std::string("[1,2]"),
                                 json{{"hook_event_name", "PreToolUse"},
                                      {"tool_name", "Bash"},
                                      {"tool_input", json::object()}}
                                     .dump()}) {
    Outcome o = Answer(bad);
    EXPECT_EQ(o.exit_code, 2) << bad;
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_NE(o.err.find("cordon hook: "), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("the command was not run"), std::string::npos) << o.err;
  }
}

TEST_F(HookCommand, BlocksWhenTheConfigDoesNotLoad) {
  WriteConfig("{ \"sandbox\": { \"mode\": \"bogus\" } }");
  Invocation inv = CordonInvocation({"hook", "claude-code"});
  inv.stdin_data = BashEvent("ls", workspace_.string());
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_NE(o.err.find("config"), std::string::npos) << o.err;
}

// A reason holding a byte that is not UTF-8 (the allow-list's reason quotes the command, and
// $'\xff' decodes to one) once made the JSON dump throw: the hook aborted (134) and Claude Code
// ran the original command unfenced.
TEST_F(HookCommand, AReasonThatIsNotUtf8StillDenies) {
  WriteConfig(R"j({"command_policy": {"allow": ["^ls( |$)"]}})j");
  Invocation inv =
      CordonInvocation({"hook", "claude-code"}, {"CLAUDE_PROJECT_DIR=" + workspace_.string()});
  inv.stdin_data = BashEvent(": $'\\xff'; touch escaped", workspace_.string());
  Outcome o = RunBinary(inv);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(json::parse(o.out)["hookSpecificOutput"]["permissionDecision"], "deny") << o.out;
}

TEST_F(Hook, BlocksDeepNestingInsteadOfCrashing) {
  std::string deep = BashEvent("ls", workspace_.string());
  deep.insert(deep.size() - 1, ",\"x\":" + std::string(50000, '[') + std::string(50000, ']'));
  Outcome o = Answer(deep);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_NE(o.err.find("nests deeper"), std::string::npos) << o.err;
}

TEST_F(Hook, BlocksARelativeProjectDirectory) {
  Invocation inv = CordonInvocation({"hook", "claude-code"}, {"CLAUDE_PROJECT_DIR=-c"});
  inv.stdin_data = BashEvent("ls", "also/relative");
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 2) << o.out;
  EXPECT_TRUE(o.out.empty()) << o.out;
}

// Sandbox mode off: the policy still refuses; an allowed command is not approved as sandboxed.
TEST_F(HookCommand, WithTheSandboxOffOnlyThePolicyAnswers) {
  WriteConfig(R"({"sandbox": {"mode": "off"}})");
  for (const auto& [command, expect_deny] :
       {std::pair<std::string, bool>{"ls", false}, {"sudo id", true}}) {
    Invocation inv =
        CordonInvocation({"hook", "claude-code"}, {"CLAUDE_PROJECT_DIR=" + workspace_.string()});
    inv.stdin_data = BashEvent(command, workspace_.string());
    Outcome o = RunBinary(inv);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    if (expect_deny) {
      EXPECT_EQ(json::parse(o.out)["hookSpecificOutput"]["permissionDecision"], "deny");
    } else {
      EXPECT_TRUE(o.out.empty()) << o.out;
    }
  }
}

TEST_F(HookCommand, GeminiCliGetsItsShapeAndTheRewriteRuns) {
  Invocation inv =
      CordonInvocation({"hook", "gemini-cli"}, {"GEMINI_PROJECT_DIR=" + workspace_.string()});
  inv.stdin_data = json{{"hook_event_name", "BeforeTool"},
                        {"tool_name", "run_shell_command"},
                        {"cwd", workspace_.string()},
                        {"tool_input", {{"command", "echo gemini > g.txt"}}}}
                       .dump();
  Outcome o = RunBinary(inv);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json out = json::parse(o.out);
  EXPECT_EQ(out["decision"], "allow");
  Invocation shell = CordonInvocation({});
  shell.argv = {"/bin/sh", "-c", out["hookSpecificOutput"]["tool_input"]["command"]};
  Outcome ran = RunBinary(shell);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ReadFile(workspace_ / "g.txt"), "gemini\n");
}

TEST_F(Hook, HasNoOpinionOnToolsThatAreNotTheShell) {
  Outcome o = Answer(json{{"hook_event_name", "PreToolUse"},
                          {"tool_name", "Read"},
                          {"tool_input", {{"file_path", "/etc/passwd"}}}}
                         .dump());
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.out.empty()) << o.out;
}

}  // namespace
}  // namespace cordon::e2e
