#include "mcp/run_command_tool.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_runner.h"

namespace cordon::mcp {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

TEST(RunCommandArgs, ReadsEveryField) {
  auto args = ParseRunCommandArgs({{"command", "make"},
                                   {"cwd", "sub"},
                                   {"timeout_seconds", 2.5},
                                   {"outside_sandbox", true},
                                   {"justification", "needs the network"}});
  ASSERT_TRUE(args) << args.error().message;
  EXPECT_EQ(args->command, "make");
  EXPECT_EQ(args->cwd, "sub");
  EXPECT_DOUBLE_EQ(*args->timeout_seconds, 2.5);
  EXPECT_TRUE(args->outside_sandbox);
}

TEST(RunCommandArgs, RefusesAMissingOrEmptyCommand) {
  EXPECT_FALSE(ParseRunCommandArgs(json::object()));
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "  "}}));
  EXPECT_FALSE(ParseRunCommandArgs({{"command", 5}}));
}

TEST(RunCommandArgs, RefusesMistypedOptionalFields) {
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "x"}, {"cwd", 1}}));
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "x"}, {"timeout_seconds", "10"}}));
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "x"}, {"timeout_seconds", 0}}));
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "x"}, {"timeout_seconds", -1}}));
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "x"}, {"outside_sandbox", "yes"}}));
}

TEST(RunCommandArgs, OutsideSandboxNeedsAJustification) {
  EXPECT_FALSE(ParseRunCommandArgs({{"command", "x"}, {"outside_sandbox", true}}));
  EXPECT_TRUE(
      ParseRunCommandArgs({{"command", "x"}, {"outside_sandbox", true}, {"justification", "why"}}));
}

class BuildRequestTest : public ::testing::Test {
 protected:
  testing::FakeRunner runner_;
  Result<CommandRequest> Build(json arguments, milliseconds max = milliseconds(60000)) {
    auto args = ParseRunCommandArgs(arguments);
    EXPECT_TRUE(args);
    return BuildCommandRequest(*args, runner_.Workspace(), max);
  }
};

TEST_F(BuildRequestTest, RunsInTheWorkspaceByDefault) {
  auto request = Build({{"command", "ls"}});
  ASSERT_TRUE(request);
  EXPECT_EQ(request->cwd, runner_.Workspace());
  EXPECT_EQ(request->shell_text, "ls");
}

TEST_F(BuildRequestTest, AcceptsARelativeCwdInsideTheWorkspace) {
  auto request = Build({{"command", "ls"}, {"cwd", "sub"}});
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->cwd, runner_.Workspace() / "sub");
}

TEST_F(BuildRequestTest, RefusesACwdThatEscapesTheWorkspace) {
  EXPECT_FALSE(Build({{"command", "ls"}, {"cwd", ".."}}));
  EXPECT_FALSE(Build({{"command", "ls"}, {"cwd", "/etc"}}));
}

TEST_F(BuildRequestTest, RefusesASymlinkThatPointsOutOfTheWorkspace) {
  std::filesystem::create_directory_symlink("/etc", runner_.Workspace() / "out");
  EXPECT_FALSE(Build({{"command", "ls"}, {"cwd", "out"}}));
}

TEST_F(BuildRequestTest, RefusesACwdThatDoesNotExist) {
  EXPECT_FALSE(Build({{"command", "ls"}, {"cwd", "missing"}}));
}

TEST_F(BuildRequestTest, AShorterTimeoutIsKeptAndALongerOneIsCapped) {
  auto shorter = Build({{"command", "x"}, {"timeout_seconds", 1.5}}, milliseconds(10000));
  ASSERT_TRUE(shorter);
  EXPECT_EQ(*shorter->timeout, milliseconds(1500));
  auto longer = Build({{"command", "x"}, {"timeout_seconds", 1e9}}, milliseconds(10000));
  ASSERT_TRUE(longer);
  EXPECT_EQ(*longer->timeout, milliseconds(10000));
}

TEST(ToolResult, ASuccessfulRunIsNotAnError) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.stdout_data.data = "hi\n";
  r.stdout_data.total_bytes = 3;
  json result = ToolResultFromRun(r, "echo hi", false, milliseconds(1000));
  EXPECT_FALSE(result["isError"].get<bool>());
  EXPECT_EQ(result["structuredContent"]["exit_code"], 0);
  EXPECT_EQ(result["structuredContent"]["stdout"], "hi\n");
  EXPECT_EQ(result["structuredContent"]["truncated"], 0);
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find("hi"), std::string::npos);
}

TEST(ToolResult, ANonZeroExitIsAnError) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.exit_code = 2;
  json result = ToolResultFromRun(r, "false", false, milliseconds(1000));
  EXPECT_TRUE(result["isError"].get<bool>());
  EXPECT_EQ(result["structuredContent"]["exit_code"], 2);
}

// A command that could not be executed tells the model why, in the text it reads.
TEST(ToolResult, ACommandNotFoundSaysWhyInTheText) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.exit_code = 127;
  r.error = "cargo: command not found in the sandbox (PATH: /usr/bin:/bin)";
  json result = ToolResultFromRun(r, "cargo test", false, milliseconds(1000));
  EXPECT_TRUE(result["isError"].get<bool>());
  EXPECT_EQ(result["structuredContent"]["exit_code"], 127);
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find(
                "exit code 127: cargo: command not found in the sandbox"),
            std::string::npos)
      << result.dump();
}

TEST(ToolResult, ATimeoutSaysTheTreeWasKilled) {
  RunResult r;
  r.status = RunStatus::kTimedOut;
  json result = ToolResultFromRun(r, "sleep 99", false, milliseconds(2000));
  EXPECT_TRUE(result["structuredContent"]["timed_out"].get<bool>());
  EXPECT_NE(result["structuredContent"]["reason"].get<std::string>().find("2 s"),
            std::string::npos);
}

TEST(ToolResult, TruncationIsCountedAcrossBothStreams) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.stdout_data.truncated_bytes = 10;
  r.stdout_data.total_bytes = 100;
  r.stderr_data.truncated_bytes = 5;
  r.stderr_data.total_bytes = 50;
  json result = ToolResultFromRun(r, "x", false, milliseconds(1000));
  EXPECT_EQ(result["structuredContent"]["truncated"], 15);
}

TEST(ToolResult, ARefusedEscapeIsADenialExplainingItself) {
  json result = ToolResultFromRun(RefusedEscape("declined", "the person declined"), "curl x", false,
                                  milliseconds(1000));
  EXPECT_TRUE(result["isError"].get<bool>());
  EXPECT_TRUE(result["structuredContent"]["denied"].get<bool>());
  EXPECT_EQ(result["structuredContent"]["decision"]["rule_id"], "outside_sandbox.declined");
  EXPECT_EQ(result["structuredContent"]["reason"], "the person declined");
}

TEST(ToolResult, TheSandboxsRefusalsAreSaidInTheTextAndListedInStructuredContent) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.exit_code = 6;
  r.denials = {{"dns", "127.0.0.53:53", "network", "sandbox.network: deny", "allow the network"},
               {"limit", "output", "limits", "limits.output_bytes", "write it to a file"}};
  const json result = ToolResultFromRun(r, "curl https://example.test", false, milliseconds(1000));
  const std::string text = result["content"][0]["text"];
  EXPECT_NE(
      text.find(
          "--- refused or discarded by cordon's sandbox ---\ndns 127.0.0.53:53 refused (network: "
          "sandbox.network: deny); fix: allow the network\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("limits.output_bytes"), std::string::npos) << "the limits have their own";
  ASSERT_EQ(result["structuredContent"]["denials"].size(), 2u);
  EXPECT_EQ(result["structuredContent"]["denials"][0]["kind"], "dns");
  // Nothing refused: no such block.
  r.denials.clear();
  const std::string plain =
      ToolResultFromRun(r, "true", false, milliseconds(1000))["content"][0]["text"];
  EXPECT_EQ(plain.find("refused by cordon"), std::string::npos);
}

}  // namespace
}  // namespace cordon::mcp
