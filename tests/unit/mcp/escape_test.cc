// outside_sandbox (ADR 0064): a person approves one command through elicitation/create.
#include "server_fixture.h"

namespace cordon::mcp::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

const json kEscapeArgs = {{"command", "curl https://example.org"},
                          {"outside_sandbox", true},
                          {"justification", "needs the network to fetch a file"}};
const json kElicitationCapability = {{"elicitation", json::object()}};

class EscapeTest : public ServerTest {
 protected:
  // Waits for the elicitation/create request and answers it with `result`.
  json AnswerElicitation(const json& result) {
    json request =
        sink_.WaitFor([](const json& m) { return m.value("method", "") == "elicitation/create"; });
    EXPECT_FALSE(request.is_null());
    if (request.is_null()) return request;
    Send({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}});
    return request;
  }
  std::string RuleId(const json& response) {
    return response["result"]["structuredContent"]["decision"]["rule_id"].get<std::string>();
  }
};

TEST_F(EscapeTest, AnAcceptedApprovalRunsThatOneCommandOutsideTheSandbox) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  json request = AnswerElicitation({{"action", "accept"}, {"content", {{"approve", true}}}});
  const std::string message = request["params"]["message"].get<std::string>();
  EXPECT_NE(message.find("curl https://example.org"), std::string::npos);
  EXPECT_NE(message.find("needs the network to fetch a file"), std::string::npos);
  EXPECT_EQ(request["params"]["requestedSchema"]["properties"]["approve"]["type"], "boolean");
  EXPECT_FALSE(request["params"].contains("mode"));  // 2025-06-18 has no modes
  json response = sink_.WaitForResponse(1);
  EXPECT_FALSE(response["result"]["isError"].get<bool>());
  EXPECT_TRUE(response["result"]["structuredContent"]["outside_sandbox"].get<bool>());
  ASSERT_EQ(runner_.calls().size(), 1u);
  EXPECT_TRUE(runner_.calls()[0].outside_sandbox);
}

TEST_F(EscapeTest, TheNextCallRunsInsideTheSandboxAgain) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  AnswerElicitation({{"action", "accept"}, {"content", {{"approve", true}}}});
  sink_.WaitForResponse(1);
  Call(2, {{"command", "curl https://example.org"}});
  ASSERT_EQ(runner_.calls().size(), 2u);
  EXPECT_FALSE(runner_.calls()[1].outside_sandbox);
}

TEST_F(EscapeTest, ADeclinedApprovalRunsNothing) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  AnswerElicitation({{"action", "decline"}});
  json response = sink_.WaitForResponse(1);
  EXPECT_TRUE(response["result"]["structuredContent"]["denied"].get<bool>());
  EXPECT_EQ(RuleId(response), "outside_sandbox.declined");
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, AcceptWithoutApproveTrueRunsNothing) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  AnswerElicitation({{"action", "accept"}, {"content", {{"approve", false}}}});
  EXPECT_EQ(RuleId(sink_.WaitForResponse(1)), "outside_sandbox.declined");
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, ADismissedPromptRunsNothing) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  AnswerElicitation({{"action", "cancel"}});
  EXPECT_EQ(RuleId(sink_.WaitForResponse(1)), "outside_sandbox.dismissed");
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, AnErrorReplyRunsNothing) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  json request =
      sink_.WaitFor([](const json& m) { return m.value("method", "") == "elicitation/create"; });
  Send({{"jsonrpc", "2.0"},
        {"id", request["id"]},
        {"error", {{"code", -32601}, {"message", "no UI"}}}});
  EXPECT_EQ(RuleId(sink_.WaitForResponse(1)), "outside_sandbox.error");
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, NoAnswerWithinTheTimeoutRunsNothingAndWithdrawsThePrompt) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(1, kEscapeArgs);
  json response = sink_.WaitForResponse(1, std::chrono::seconds(5));
  EXPECT_EQ(RuleId(response), "outside_sandbox.timeout");
  EXPECT_FALSE(
      sink_
          .WaitFor([](const json& m) { return m.value("method", "") == "notifications/cancelled"; })
          .is_null());
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, AClientWithoutElicitationIsToldWhy) {
  Initialize("2025-06-18");
  json response = Call(1, kEscapeArgs);
  EXPECT_EQ(RuleId(response), "outside_sandbox.unsupported");
  EXPECT_NE(response["result"]["content"][0]["text"].get<std::string>().find("elicitation"),
            std::string::npos);
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, ElicitationIsNotUsedWithAProtocolVersionThatLacksIt) {
  Initialize("2025-03-26", kElicitationCapability);
  EXPECT_EQ(RuleId(Call(1, kEscapeArgs)), "outside_sandbox.unsupported");
}

TEST_F(EscapeTest, AUrlOnlyElicitationClientCannotShowTheForm) {
  Initialize("2025-11-25", {{"elicitation", {{"url", json::object()}}}});
  EXPECT_EQ(RuleId(Call(1, kEscapeArgs)), "outside_sandbox.unsupported");
}

TEST_F(EscapeTest, TheFormModeIsNamedFrom2025_11_25) {
  Initialize("2025-11-25", {{"elicitation", {{"form", json::object()}}}});
  StartCall(1, kEscapeArgs);
  json request = AnswerElicitation({{"action", "decline"}});
  EXPECT_EQ(request["params"]["mode"], "form");
  sink_.WaitForResponse(1);
}

TEST_F(EscapeTest, TheOperatorCanTurnEscapesOff) {
  runner_.set_allow_outside(false);
  Initialize("2025-06-18", kElicitationCapability);
  EXPECT_EQ(RuleId(Call(1, kEscapeArgs)), "outside_sandbox.disabled");
  for (const json& m : sink_.messages()) EXPECT_NE(m.value("method", ""), "elicitation/create");
  EXPECT_TRUE(runner_.calls().empty());
}

TEST_F(EscapeTest, CancellingTheCallWhileWaitingForApprovalRunsNothingAndAnswersNothing) {
  Initialize("2025-06-18", kElicitationCapability);
  StartCall(7, kEscapeArgs);
  ASSERT_FALSE(
      sink_.WaitFor([](const json& m) { return m.value("method", "") == "elicitation/create"; })
          .is_null());
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 7}}}});
  EXPECT_TRUE(server_->Shutdown());
  EXPECT_TRUE(sink_.WaitForResponse(7, milliseconds(100)).is_null());
  EXPECT_TRUE(runner_.calls().empty());
}

}  // namespace
}  // namespace cordon::mcp::testing
