// JSON-RPC 2.0 as MCP uses it: one message per line, no batches (the MCP revision 2025-06-18
// removed them), ids that are strings or integers.
//
// ParseMessage never throws and never trusts the input: every malformed line becomes an
// ErrorReply carrying the JSON-RPC error to send back (with the request's id when it could be
// read, null otherwise).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace cordon::mcp {

namespace rpc_error {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
}  // namespace rpc_error

// Nesting deeper than this is refused before parsing (-32700), so no input can make a
// recursive walk of the document (destruction, dumping) exhaust the stack.
inline constexpr int kMaxJsonDepth = 64;

struct Request {
  nlohmann::json id;  // string or integer
  std::string method;
  nlohmann::json params;  // object, or null when absent
};

struct Notification {
  std::string method;
  nlohmann::json params;  // object, or null when absent
};

// A reply from the client to a request the server sent (elicitation/create, ping).
struct Response {
  nlohmann::json id;
  std::optional<nlohmann::json> result;
  std::optional<nlohmann::json> error;
};

struct ErrorReply {
  nlohmann::json id;  // null when the id could not be read
  int code = rpc_error::kInvalidRequest;
  std::string message;
};

using Message = std::variant<Request, Notification, Response, ErrorReply>;

Message ParseMessage(std::string_view line);

// A string or an integer (MCP: "MUST be a string or integer"; null is not allowed).
bool IsValidId(const nlohmann::json& id);
// A map key for an id: "1" and 1 are different ids.
std::string IdKey(const nlohmann::json& id);

nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result);
nlohmann::json MakeError(const nlohmann::json& id, int code, std::string_view message);
nlohmann::json MakeNotification(std::string_view method, nlohmann::json params);
nlohmann::json MakeRequest(const nlohmann::json& id, std::string_view method,
                           nlohmann::json params);

}  // namespace cordon::mcp
