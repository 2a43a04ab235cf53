// start_background, read_background and stop_background through the server, with the fake
// runner; and BackgroundJobs' own bounds with a runner that writes a lot.
#include <gtest/gtest.h>

#include <string>

#include "mcp/background_jobs.h"
#include "mcp/background_tools.h"
#include "server_fixture.h"

namespace cordon::mcp::testing {
namespace {

using nlohmann::json;

class BackgroundTest : public ServerTest {
 protected:
  json Tool(const json& id, const std::string& name, json arguments) {
    Send({{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "tools/call"},
          {"params", {{"name", name}, {"arguments", std::move(arguments)}}}});
    return sink_.WaitForResponse(id, std::chrono::seconds(10))["result"];
  }
  static std::string Text(const json& result) {
    return result["content"][0]["text"].get<std::string>();
  }
};

TEST_F(BackgroundTest, ToolsListOffersTheThreeToolsWithoutAnEscapeHatch) {
  Initialize("2025-06-18");
  json tools = Request(1, "tools/list")["result"]["tools"];
  json start;
  int background = 0;
  for (const json& tool : tools) {
    const std::string name = tool["name"];
    if (name == "start_background") start = tool;
    if (name.ends_with("_background")) {
      ++background;
      EXPECT_TRUE(tool.contains("outputSchema")) << name;
    }
  }
  EXPECT_EQ(background, 3);
  ASSERT_TRUE(start.is_object());
  EXPECT_FALSE(start["inputSchema"]["properties"].contains("outside_sandbox"));
  // The fake runs network deny on a native-like backend ("fake"): it says no loopback is shared.
  EXPECT_NE(start["description"].get<std::string>().find("own private loopback"),
            std::string::npos);
}

TEST_F(BackgroundTest, StartAnswersAtOnceReadGivesNewOutputStopKillsTheTree) {
  Initialize();
  json started = Tool(1, "start_background", {{"command", "print-then-block"}});
  EXPECT_FALSE(started["isError"].get<bool>()) << started.dump();
  EXPECT_EQ(started["structuredContent"]["id"], "bg-1");
  EXPECT_EQ(started["structuredContent"]["status"], "running");
  EXPECT_EQ(started["structuredContent"]["stdout"], "first\nsecond\n");
  EXPECT_NE(Text(started).find("read_background"), std::string::npos);
  ASSERT_EQ(runner_.calls().size(), 1u);
  const CommandRequest request = runner_.calls()[0].request;  // a copy: calls() is one
  EXPECT_FALSE(request.capture_output);
  ASSERT_TRUE(request.timeout.has_value());
  EXPECT_EQ(*request.timeout, std::chrono::hours(24));  // no deadline but the session's end

  // Nothing new: an empty read, still running; each byte is read once.
  json read = Tool(2, "read_background", {{"id", "bg-1"}});
  EXPECT_EQ(read["structuredContent"]["running"], true);
  EXPECT_EQ(read["structuredContent"]["stdout"], "");
  EXPECT_TRUE(read["structuredContent"]["exit_code"].is_null());

  json stopped = Tool(3, "stop_background", {{"id", "bg-1"}});
  EXPECT_FALSE(stopped["isError"].get<bool>());
  EXPECT_EQ(stopped["structuredContent"]["status"], "stopped");
  EXPECT_EQ(stopped["structuredContent"]["running"], false);
  EXPECT_TRUE(runner_.calls()[0].saw_cancel);
}

TEST_F(BackgroundTest, ARefusedCommandComesBackAsTheAnswerOfStart) {
  Initialize();
  json started = Tool(1, "start_background", {{"command", "sudo id"}});
  EXPECT_TRUE(started["isError"].get<bool>());
  EXPECT_EQ(started["structuredContent"]["status"], "denied");
  EXPECT_EQ(started["structuredContent"]["running"], false);
  EXPECT_NE(started["structuredContent"]["reason"].get<std::string>().find("sudo"),
            std::string::npos);
  EXPECT_NE(Text(started).find("NOT RUN: denied [default.sudo]"), std::string::npos);
}

TEST_F(BackgroundTest, AQuickCommandEndsWithinStartAndAFailureIsAnError) {
  Initialize();
  json quick = Tool(1, "start_background", {{"command", "echo hi"}});
  EXPECT_FALSE(quick["isError"].get<bool>());
  EXPECT_EQ(quick["structuredContent"]["status"], "exited");
  EXPECT_EQ(quick["structuredContent"]["exit_code"], 0);
  EXPECT_EQ(quick["structuredContent"]["stdout"], "ran: echo hi\n");
  json failed = Tool(2, "start_background", {{"command", "fail"}});
  EXPECT_TRUE(failed["isError"].get<bool>());
  EXPECT_EQ(failed["structuredContent"]["exit_code"], 3);
}

TEST_F(BackgroundTest, ReadWaitsForNewOutputAndSeesEveryLineOnce) {
  Initialize();
  json started = Tool(1, "start_background", {{"command", "print 20"}});  // 30 ms apart
  std::string seen = started["structuredContent"]["stdout"];
  bool running = started["structuredContent"]["running"];
  EXPECT_TRUE(running);
  for (int call = 2; running && call < 100; ++call) {
    json read = Tool(call, "read_background", {{"id", "bg-1"}, {"wait_seconds", 5}});
    seen += read["structuredContent"]["stdout"].get<std::string>();
    running = read["structuredContent"]["running"];
  }
  EXPECT_FALSE(running);
  std::string expected;
  for (int i = 0; i < 20; ++i) expected += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(seen, expected);
}

TEST_F(BackgroundTest, BadArgumentsAndUnknownIdsAreToolErrors) {
  Initialize();
  json escape = Tool(1, "start_background",
                     {{"command", "x"}, {"outside_sandbox", true}, {"justification", "j"}});
  EXPECT_TRUE(escape["isError"].get<bool>());
  EXPECT_NE(Text(escape).find("always runs in the sandbox"), std::string::npos);
  EXPECT_TRUE(runner_.calls().empty());
  json no_id = Tool(2, "read_background", json::object());
  EXPECT_NE(Text(no_id).find("'id'"), std::string::npos);
  json bad_wait = Tool(3, "read_background", {{"id", "bg-1"}, {"wait_seconds", -1}});
  EXPECT_NE(Text(bad_wait).find("wait_seconds"), std::string::npos);
  json unknown = Tool(4, "stop_background", {{"id", "bg-7"}});
  EXPECT_TRUE(unknown["isError"].get<bool>());
  EXPECT_NE(Text(unknown).find("no background command 'bg-7'"), std::string::npos);
}

TEST_F(BackgroundTest, NoMoreThanEightRunAtOnceAndTheRefusalNamesThem) {
  Initialize();
  for (int i = 1; i <= 8; ++i) {
    json started = Tool(i, "start_background", {{"command", "block"}});
    ASSERT_EQ(started["structuredContent"]["status"], "running") << i;
  }
  json ninth = Tool(9, "start_background", {{"command", "block"}});
  EXPECT_TRUE(ninth["isError"].get<bool>());
  EXPECT_NE(Text(ninth).find("bg-1 (block)"), std::string::npos) << Text(ninth);
  EXPECT_EQ(runner_.calls().size(), 8u);
  Tool(10, "stop_background", {{"id", "bg-3"}});
  json again = Tool(11, "start_background", {{"command", "block"}});
  EXPECT_EQ(again["structuredContent"]["id"], "bg-9");
}

TEST_F(BackgroundTest, TheSessionsEndStopsEveryBackgroundCommand) {
  Initialize();
  Tool(1, "start_background", {{"command", "wait-cancel"}});
  Tool(2, "start_background", {{"command", "wait-cancel"}});
  EXPECT_TRUE(server_->Shutdown());
  ASSERT_EQ(runner_.calls().size(), 2u);
  EXPECT_TRUE(runner_.calls()[0].saw_cancel);
  EXPECT_TRUE(runner_.calls()[1].saw_cancel);
}

TEST_F(BackgroundTest, GitCommitWaitsForNoBackgroundCommandAndNamesThem) {
  ServerOptions options = DefaultOptions();
  options.commit_root = runner_.Workspace();
  Reset(options);
  Initialize();
  Tool(1, "start_background", {{"command", "block"}});
  json refused = Tool(2, "git_commit", {{"message", "m"}});
  EXPECT_TRUE(refused["isError"].get<bool>());
  EXPECT_NE(Text(refused).find("background commands are running in the workspace (bg-1 (block))"),
            std::string::npos)
      << Text(refused);
  Tool(3, "stop_background", {{"id", "bg-1"}});
  // The lock is free again: git itself answers now (the workspace is no repository).
  json after = Tool(4, "git_commit", {{"message", "m"}});
  EXPECT_EQ(Text(after).find("background"), std::string::npos) << Text(after);
}

// A runner whose command writes `bytes` bytes of stdout at once and exits.
class FloodRunner : public FakeRunner {
 public:
  explicit FloodRunner(std::size_t bytes) : bytes_(bytes) {}
  RunResult Run(const CommandRequest&, bool, const CancelToken&,
                const OutputCallback& on_output) override {
    std::string data(bytes_, 'a');
    data.back() = 'z';
    on_output(OutputStream::kStdout, data);
    RunResult result;
    result.status = RunStatus::kExited;
    return result;
  }

 private:
  std::size_t bytes_;
};

TEST(BackgroundJobs, UnreadOutputKeepsTheNewestBytesAndCountsTheRest) {
  const std::size_t extra = 1000;
  FloodRunner runner(BackgroundJobs::kMaxUnreadBytes + extra);
  BackgroundJobs jobs(runner, nullptr);
  CommandRequest request;
  request.shell_text = "flood";
  auto report = jobs.Start(request, "flood", std::chrono::seconds(5));
  ASSERT_TRUE(report.has_value());
  EXPECT_FALSE(report->running);
  EXPECT_EQ(report->stdout_text.size(), BackgroundJobs::kMaxUnreadBytes);
  EXPECT_EQ(report->stdout_text.back(), 'z');
  EXPECT_EQ(report->dropped_bytes, extra);
  auto again = jobs.Read(report->id, std::chrono::milliseconds(0), *CancelToken::Create());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->stdout_text, "");
  EXPECT_EQ(again->dropped_bytes, 0u);
}

TEST(BackgroundJobs, NothingStartsOnceTheSessionIsEnding) {
  FakeRunner runner;
  BackgroundJobs jobs(runner, nullptr);
  jobs.StopAll();
  CommandRequest request;
  request.shell_text = "echo";
  auto refused = jobs.Start(request, "echo", std::chrono::milliseconds(0));
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("ending"), std::string::npos);
  EXPECT_TRUE(runner.calls().empty());
}

TEST(LoopbackNote, SaysWhetherLaterCommandsReachAServer) {
  Capabilities c;
  c.backend = "native";
  c.network = NetworkPolicy::kDeny;
  c.enforcement.net_namespace = true;
  EXPECT_NE(LoopbackNote(c).find("share one private network namespace"), std::string::npos);
  // A process limit held by RLIMIT_NPROC: each command in namespaces of its own.
  c.limits.push_back({"processes", 64, "RLIMIT_NPROC in the sandbox's user namespace", true});
  EXPECT_NE(LoopbackNote(c).find("own private loopback"), std::string::npos);
  c.limits.back().mechanism = "cgroup v2 pids.max";
  EXPECT_NE(LoopbackNote(c).find("share one"), std::string::npos);
  c.backend = "bwrap";
  EXPECT_NE(LoopbackNote(c).find("own private loopback"), std::string::npos);
  c.network = NetworkPolicy::kAllow;
  EXPECT_NE(LoopbackNote(c).find("host's network"), std::string::npos);
}

}  // namespace
}  // namespace cordon::mcp::testing
