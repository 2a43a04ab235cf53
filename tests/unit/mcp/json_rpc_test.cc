#include "mcp/json_rpc.h"

#include <gtest/gtest.h>

#include <string>

namespace cordon::mcp {
namespace {

using nlohmann::json;

ErrorReply ExpectError(std::string_view line) {
  Message m = ParseMessage(line);
  EXPECT_TRUE(std::holds_alternative<ErrorReply>(m)) << line;
  if (auto* e = std::get_if<ErrorReply>(&m)) return *e;
  return {};
}

TEST(JsonRpc, MalformedJsonIsAParseErrorWithNullId) {
  ErrorReply e = ExpectError("{\"jsonrpc\":\"2.0\",\"id\":1,");
  EXPECT_EQ(e.code, rpc_error::kParseError);
  EXPECT_TRUE(e.id.is_null());
}

TEST(JsonRpc, InvalidUtf8IsAParseError) {
  EXPECT_EQ(ExpectError("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}").code,
            rpc_error::kParseError);
}

TEST(JsonRpc, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(ExpectError(deep).code, rpc_error::kParseError);
}

TEST(JsonRpc, NestingBelowTheLimitParses) {
  const std::string ok =
      "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":" + std::string(10, '[') +
      std::string(10, ']') + "}}";
  EXPECT_TRUE(std::holds_alternative<Notification>(ParseMessage(ok)));
}

TEST(JsonRpc, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string line = "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"s\":\"" +
                           std::string(1000, '[') + "\\\"\"}}";
  EXPECT_TRUE(std::holds_alternative<Notification>(ParseMessage(line)));
}

TEST(JsonRpc, BatchesAreInvalidRequests) {
  ErrorReply e = ExpectError("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  EXPECT_EQ(e.code, rpc_error::kInvalidRequest);
  EXPECT_TRUE(e.id.is_null());
}

TEST(JsonRpc, NonObjectsAreInvalidRequests) {
  EXPECT_EQ(ExpectError("42").code, rpc_error::kInvalidRequest);
  EXPECT_EQ(ExpectError("\"ping\"").code, rpc_error::kInvalidRequest);
  EXPECT_EQ(ExpectError("null").code, rpc_error::kInvalidRequest);
}

TEST(JsonRpc, MissingOrWrongJsonrpcVersionIsAnInvalidRequestKeepingTheId) {
  ErrorReply e = ExpectError("{\"id\":7,\"method\":\"ping\"}");
  EXPECT_EQ(e.code, rpc_error::kInvalidRequest);
  EXPECT_EQ(e.id, json(7));
  EXPECT_EQ(ExpectError("{\"jsonrpc\":\"1.0\",\"id\":7,\"method\":\"ping\"}").code,
            rpc_error::kInvalidRequest);
  EXPECT_EQ(ExpectError("{\"jsonrpc\":2.0,\"id\":7,\"method\":\"ping\"}").code,
            rpc_error::kInvalidRequest);
}

TEST(JsonRpc, IdsOfTheWrongTypeAreInvalidRequestsWithNullId) {
  for (const char* id : {"null", "true", "1.5", "{}", "[]"}) {
    ErrorReply e =
        ExpectError(std::string("{\"jsonrpc\":\"2.0\",\"id\":") + id + ",\"method\":\"ping\"}");
    EXPECT_EQ(e.code, rpc_error::kInvalidRequest) << id;
    EXPECT_TRUE(e.id.is_null()) << id;
  }
}

TEST(JsonRpc, StringAndIntegerIdsMakeRequests) {
  for (const char* id : {"\"abc\"", "0", "-3", "18446744073709551615"}) {
    Message m =
        ParseMessage(std::string("{\"jsonrpc\":\"2.0\",\"id\":") + id + ",\"method\":\"ping\"}");
    ASSERT_TRUE(std::holds_alternative<Request>(m)) << id;
    EXPECT_EQ(std::get<Request>(m).method, "ping");
  }
}

TEST(JsonRpc, AMethodThatIsNotAStringIsAnInvalidRequest) {
  EXPECT_EQ(ExpectError("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}").code,
            rpc_error::kInvalidRequest);
}

TEST(JsonRpc, ArrayParamsAreInvalidParamsForARequest) {
  ErrorReply e = ExpectError("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}");
  EXPECT_EQ(e.code, rpc_error::kInvalidParams);
  EXPECT_EQ(e.id, json(1));
}

TEST(JsonRpc, ScalarParamsAreInvalidRequests) {
  EXPECT_EQ(ExpectError("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":3}").code,
            rpc_error::kInvalidRequest);
}

TEST(JsonRpc, AMessageWithoutIdIsANotification) {
  Message m = ParseMessage("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  ASSERT_TRUE(std::holds_alternative<Notification>(m));
  EXPECT_EQ(std::get<Notification>(m).method, "notifications/initialized");
}

TEST(JsonRpc, AResultOrErrorWithIdIsAResponse) {
  Message ok = ParseMessage("{\"jsonrpc\":\"2.0\",\"id\":\"cordon-1\",\"result\":{}}");
  ASSERT_TRUE(std::holds_alternative<Response>(ok));
  EXPECT_TRUE(std::get<Response>(ok).result.has_value());
  Message err = ParseMessage(
      "{\"jsonrpc\":\"2.0\",\"id\":\"cordon-1\",\"error\":{\"code\":-1,\"message\":\"x\"}}");
  ASSERT_TRUE(std::holds_alternative<Response>(err));
  EXPECT_TRUE(std::get<Response>(err).error.has_value());
}

TEST(JsonRpc, AResponseWithBothResultAndErrorIsInvalid) {
  EXPECT_EQ(ExpectError("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{}}").code,
            rpc_error::kInvalidRequest);
}

TEST(JsonRpc, AClientsNullIdErrorIsAResponseNotAnotherError) {
  Message m = ParseMessage(
      "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}");
  EXPECT_TRUE(std::holds_alternative<Response>(m));
}

TEST(JsonRpc, IdKeysTellStringsFromIntegers) { EXPECT_NE(IdKey(json(1)), IdKey(json("1"))); }

}  // namespace
}  // namespace cordon::mcp
