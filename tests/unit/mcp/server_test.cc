#include <thread>

#include "server_fixture.h"

namespace cordon::mcp::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

TEST_F(ServerTest, InitializeAnswersWithTheClientsVersionWhenSupported) {
  for (const char* version : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
    Reset(DefaultOptions());
    json response = Initialize(version);
    EXPECT_EQ(response["result"]["protocolVersion"], version);
  }
}

TEST_F(ServerTest, InitializeAnswersWithItsLatestVersionWhenTheClientsIsUnknown) {
  for (const char* version : {"2099-01-01", "2026-07-28", "1999-01-01"}) {
    Reset(DefaultOptions());
    EXPECT_EQ(Initialize(version)["result"]["protocolVersion"], "2025-11-25") << version;
  }
}

TEST_F(ServerTest, InitializeReportsTheSandboxCapabilitiesAndServerInfo) {
  json result = Initialize()["result"];
  EXPECT_EQ(result["serverInfo"]["name"], "cordon");
  EXPECT_EQ(result["serverInfo"]["version"], "9.9.9");
  EXPECT_EQ(result["capabilities"]["tools"]["listChanged"], false);
  EXPECT_TRUE(result["capabilities"].contains("logging"));
  const json& sandbox = result["capabilities"]["experimental"]["cordon/sandbox"];
  EXPECT_EQ(sandbox["mode"], "workspace_write");
  EXPECT_EQ(sandbox["network"], "deny");
  EXPECT_EQ(sandbox["backend"], "fake");
  EXPECT_NE(result["instructions"].get<std::string>().find("Network access is off"),
            std::string::npos);
}

TEST_F(ServerTest, ASecondInitializeIsRefused) {
  Initialize();
  EXPECT_EQ(Request(2, "initialize", {{"protocolVersion", "2025-06-18"}})["error"]["code"],
            rpc_error::kInvalidRequest);
}

TEST_F(ServerTest, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  EXPECT_EQ(Request(1, "tools/list")["error"]["code"], rpc_error::kInvalidRequest);
  EXPECT_EQ(Request(2, "ping")["result"], json::object());
}

TEST_F(ServerTest, UnknownMethodsAreMethodNotFound) {
  Initialize();
  EXPECT_EQ(Request(1, "tools/frobnicate")["error"]["code"], rpc_error::kMethodNotFound);
  EXPECT_EQ(Request(2, "resources/list")["error"]["code"], rpc_error::kMethodNotFound);
}

TEST_F(ServerTest, NotificationsAreNeverAnswered) {
  Initialize();
  const std::size_t before = sink_.messages().size();
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/whatever"}});
  Send({{"jsonrpc", "2.0"}, {"method", "tools/list"}});  // a request's name, but no id
  Send(
      {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 99}}}});
  EXPECT_EQ(sink_.messages().size(), before);
}

TEST_F(ServerTest, MalformedLinesGetErrorsAndTheServerKeepsServing) {
  Initialize();
  server_->HandleLine("{not json");
  server_->HandleLine("[1,2]");
  server_->HandleOversizedLine(4096);
  std::vector<json> messages = sink_.messages();
  ASSERT_GE(messages.size(), 3u);
  EXPECT_EQ(messages[messages.size() - 3]["error"]["code"], rpc_error::kParseError);
  EXPECT_EQ(messages[messages.size() - 2]["error"]["code"], rpc_error::kInvalidRequest);
  EXPECT_EQ(messages[messages.size() - 1]["error"]["code"], rpc_error::kInvalidRequest);
  EXPECT_TRUE(messages.back()["id"].is_null());
  EXPECT_EQ(Request(5, "ping")["result"], json::object());
}

TEST_F(ServerTest, ToolsListHasRunCommandWithItsSchemas) {
  Initialize("2025-06-18");
  json tools = Request(1, "tools/list")["result"]["tools"];
  ASSERT_EQ(tools.size(), 4u);  // run_command and the three background tools
  EXPECT_EQ(tools[0]["name"], "run_command");
  EXPECT_EQ(tools[0]["inputSchema"]["required"], json::array({"command"}));
  EXPECT_TRUE(tools[0]["inputSchema"]["properties"].contains("outside_sandbox"));
  EXPECT_TRUE(tools[0].contains("outputSchema"));
  EXPECT_NE(tools[0]["description"].get<std::string>().find("network deny"), std::string::npos);
}

TEST_F(ServerTest, ToolsListLeavesOutTheOutputSchemaForClientsBeforeIt) {
  Initialize("2024-11-05");
  json tools = Request(1, "tools/list")["result"]["tools"];
  EXPECT_FALSE(tools[0].contains("outputSchema"));
}

TEST_F(ServerTest, ACommandThatRunsReturnsTextAndStructuredContent) {
  Initialize();
  json result = Call(1, {{"command", "echo hi"}})["result"];
  EXPECT_FALSE(result["isError"].get<bool>());
  EXPECT_EQ(result["content"][0]["type"], "text");
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find("ran: echo hi"),
            std::string::npos);
  EXPECT_EQ(result["structuredContent"]["exit_code"], 0);
  EXPECT_EQ(result["structuredContent"]["denied"], false);
  ASSERT_EQ(runner_.calls().size(), 1u);
  EXPECT_FALSE(runner_.calls()[0].outside_sandbox);
}

// The default: the model gets the text, not a JSON dump that clients put in its place.
TEST_F(ServerTest, LeanByDefaultNoOutputSchemaAndNoStructuredContent) {
  ServerOptions options = DefaultOptions();
  options.structured_output = false;
  Reset(options);
  Initialize();
  json tools = Request(1, "tools/list")["result"]["tools"];
  ASSERT_FALSE(tools.empty());
  for (const json& tool : tools) EXPECT_FALSE(tool.contains("outputSchema")) << tool["name"];
  for (const char* command : {"echo hi", "sudo true", "fail"}) {
    json result = Call(command, {{"command", command}})["result"];
    EXPECT_FALSE(result.contains("structuredContent")) << command;
    ASSERT_EQ(result["content"].size(), 1u) << command;
    EXPECT_FALSE(result["content"][0]["text"].get<std::string>().empty()) << command;
  }
}

TEST_F(ServerTest, StructuredOutputAddsTheSchemaAndTheContent) {
  Initialize();
  json tools = Request(1, "tools/list")["result"]["tools"];
  for (const json& tool : tools) EXPECT_TRUE(tool.contains("outputSchema")) << tool["name"];
  EXPECT_TRUE(Call(2, {{"command", "echo hi"}})["result"].contains("structuredContent"));
}

TEST_F(ServerTest, APolicyDenialIsAToolResultNotAProtocolError) {
  Initialize();
  json response = Call(1, {{"command", "sudo true"}});
  ASSERT_TRUE(response.contains("result"));
  EXPECT_TRUE(response["result"]["isError"].get<bool>());
  EXPECT_TRUE(response["result"]["structuredContent"]["denied"].get<bool>());
  EXPECT_EQ(response["result"]["structuredContent"]["decision"]["rule_id"], "default.sudo");
  EXPECT_NE(response["result"]["content"][0]["text"].get<std::string>().find("NOT RUN"),
            std::string::npos);
}

TEST_F(ServerTest, AFailingCommandIsAToolErrorWithItsOutput) {
  Initialize();
  json result = Call(1, {{"command", "fail"}})["result"];
  EXPECT_TRUE(result["isError"].get<bool>());
  EXPECT_EQ(result["structuredContent"]["exit_code"], 3);
  EXPECT_EQ(result["structuredContent"]["stderr"], "boom\n");
}

TEST_F(ServerTest, AnUnknownToolIsInvalidParams) {
  Initialize();
  json response = Request(1, "tools/call", {{"name", "rm_rf"}, {"arguments", json::object()}});
  EXPECT_EQ(response["error"]["code"], rpc_error::kInvalidParams);
}

TEST_F(ServerTest, MalformedToolsCallParamsAreInvalidParams) {
  Initialize();
  EXPECT_EQ(Request(1, "tools/call", {{"arguments", json::object()}})["error"]["code"],
            rpc_error::kInvalidParams);
  EXPECT_EQ(Request(2, "tools/call", {{"name", 3}})["error"]["code"], rpc_error::kInvalidParams);
  EXPECT_EQ(
      Request(3, "tools/call", {{"name", "run_command"}, {"arguments", "ls"}})["error"]["code"],
      rpc_error::kInvalidParams);
}

TEST_F(ServerTest, BadToolArgumentsComeBackAsToolErrorsTheModelCanFix) {
  Initialize();
  json result = Call(1, {{"command", 42}})["result"];
  EXPECT_TRUE(result["isError"].get<bool>());
  EXPECT_NE(result["content"][0]["text"].get<std::string>().find("'command' must be a string"),
            std::string::npos);
  json outside = Call(2, {{"command", "ls"}, {"cwd", "/"}})["result"];
  EXPECT_TRUE(outside["isError"].get<bool>());
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(ServerTest, ASlowCallDoesNotBlockAnother) {
  Initialize();
  StartCall(1, {{"command", "block"}});
  ASSERT_TRUE(runner_.WaitForCalls(1, std::chrono::seconds(5)));
  json second = Call(2, {{"command", "echo second"}});
  ASSERT_TRUE(second.contains("result"));
  EXPECT_TRUE(sink_.WaitForResponse(1, milliseconds(50)).is_null());  // still blocked
  runner_.Release();
  json first = sink_.WaitForResponse(1);
  ASSERT_TRUE(first.contains("result"));
  // Responses left out of order: the second call's before the first's.
  std::vector<json> messages = sink_.messages();
  std::ptrdiff_t pos1 = -1, pos2 = -1;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].value("id", json()) == json(1)) pos1 = static_cast<std::ptrdiff_t>(i);
    if (messages[i].value("id", json()) == json(2)) pos2 = static_cast<std::ptrdiff_t>(i);
  }
  EXPECT_LT(pos2, pos1);
}

TEST_F(ServerTest, ACancelledCallReachesTheRunnerAndGetsNoResponse) {
  Initialize();
  StartCall("c1", {{"command", "wait-cancel"}});
  ASSERT_TRUE(runner_.WaitForCalls(1, std::chrono::seconds(5)));
  Send({{"jsonrpc", "2.0"},
        {"method", "notifications/cancelled"},
        {"params", {{"requestId", "c1"}, {"reason", "user pressed escape"}}}});
  for (int i = 0; i < 500 && server_->calls_in_flight() > 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(server_->calls_in_flight(), 0u);
  EXPECT_TRUE(runner_.calls()[0].saw_cancel);
  EXPECT_TRUE(sink_.WaitForResponse("c1", milliseconds(100)).is_null());
}

TEST_F(ServerTest, CancellingAnotherIdLeavesTheCallRunning) {
  Initialize();
  StartCall("c1", {{"command", "block"}});
  ASSERT_TRUE(runner_.WaitForCalls(1, std::chrono::seconds(5)));
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 1}}}});
  runner_.Release();
  EXPECT_TRUE(sink_.WaitForResponse("c1").contains("result"));
  EXPECT_FALSE(runner_.calls()[0].saw_cancel);
}

TEST_F(ServerTest, ShutdownCancelsEveryCallInFlight) {
  Initialize();
  StartCall(1, {{"command", "wait-cancel"}});
  StartCall(2, {{"command", "wait-cancel"}});
  ASSERT_TRUE(runner_.WaitForCalls(2, std::chrono::seconds(5)));
  EXPECT_TRUE(server_->Shutdown());
  EXPECT_EQ(server_->calls_in_flight(), 0u);
  for (const auto& call : runner_.calls()) EXPECT_TRUE(call.saw_cancel);
}

TEST_F(ServerTest, AnIdStillInFlightCannotBeReused) {
  Initialize();
  StartCall(1, {{"command", "block"}});
  ASSERT_TRUE(runner_.WaitForCalls(1, std::chrono::seconds(5)));
  StartCall(1, {{"command", "echo again"}});
  json error = sink_.WaitFor([](const json& m) { return m.contains("error"); });
  EXPECT_EQ(error["error"]["code"], rpc_error::kInvalidRequest);
  runner_.Release();
}

TEST_F(ServerTest, AnIdIsFreeAgainAsSoonAsItsResponseArrives) {
  // A client may reuse an id once it has the response; the next call must not race the
  // server's bookkeeping and be refused as a duplicate.
  Initialize();
  for (int i = 0; i < 200; ++i) {
    json first = Call(7, {{"command", "echo one"}});
    ASSERT_TRUE(first.contains("result")) << first.dump();
    sink_.Clear();
    json second = Call(7, {{"command", "echo two"}});
    ASSERT_TRUE(second.contains("result")) << "iteration " << i << ": " << second.dump();
    sink_.Clear();
  }
}

TEST_F(ServerTest, CallsBeyondTheLimitAreRefusedAsToolResults) {
  ServerOptions options = DefaultOptions();
  options.max_calls_in_flight = 1;
  Reset(options);
  Initialize();
  StartCall(1, {{"command", "block"}});
  ASSERT_TRUE(runner_.WaitForCalls(1, std::chrono::seconds(5)));
  json refused = Call(2, {{"command", "echo"}});
  EXPECT_TRUE(refused["result"]["isError"].get<bool>());
  runner_.Release();
  EXPECT_TRUE(sink_.WaitForResponse(1).contains("result"));
}

TEST_F(ServerTest, ProgressStreamsOutputBeforeTheResultWhenAsked) {
  Initialize();
  StartCall(1, {{"command", "print 5"}}, {{"progressToken", "tok"}});
  ASSERT_TRUE(sink_.WaitForResponse(1).contains("result"));
  std::vector<json> messages = sink_.messages();
  double last = 0;
  std::string streamed;
  bool result_seen = false;
  for (const json& m : messages) {
    if (m.value("id", json()) == json(1)) result_seen = true;
    if (m.value("method", "") != "notifications/progress") continue;
    EXPECT_FALSE(result_seen) << "progress after the result";
    EXPECT_EQ(m["params"]["progressToken"], "tok");
    EXPECT_GT(m["params"]["progress"].get<double>(), last);
    last = m["params"]["progress"].get<double>();
    streamed += m["params"]["message"].get<std::string>();
  }
  EXPECT_EQ(streamed, "line 0\nline 1\nline 2\nline 3\nline 4\n");
}

TEST_F(ServerTest, OutputHeldBackByTheRateLimitIsSentWhileTheCommandIsQuiet) {
  ServerOptions options = DefaultOptions();
  options.progress_interval = milliseconds(200);
  Reset(options);
  Initialize();
  StartCall(1, {{"command", "print-then-block"}}, {{"progressToken", 5}});
  // "first" goes at once; "second" arrives within the interval and is held back, then sent
  // by the timer although the command prints nothing more and has not ended.
  json second = sink_.WaitFor(
      [](const json& m) {
        return m.value("method", "") == "notifications/progress" &&
               m["params"]["message"] == "second\n";
      },
      std::chrono::seconds(3));
  ASSERT_FALSE(second.is_null());
  EXPECT_EQ(second["params"]["progress"], 13);
  EXPECT_TRUE(sink_.WaitForResponse(1, milliseconds(10)).is_null());
  runner_.Release();
  EXPECT_TRUE(sink_.WaitForResponse(1).contains("result"));
}

TEST_F(ServerTest, NoProgressIsSentWithoutAToken) {
  Initialize();
  ASSERT_TRUE(Call(1, {{"command", "print 3"}}).contains("result"));
  for (const json& m : sink_.messages()) EXPECT_NE(m.value("method", ""), "notifications/progress");
}

TEST_F(ServerTest, LoggingSetLevelAcceptsKnownLevelsOnly) {
  Initialize();
  EXPECT_EQ(Request(1, "logging/setLevel", {{"level", "info"}})["result"], json::object());
  EXPECT_EQ(Request(2, "logging/setLevel", {{"level", "loud"}})["error"]["code"],
            rpc_error::kInvalidParams);
}

}  // namespace
}  // namespace cordon::mcp::testing
