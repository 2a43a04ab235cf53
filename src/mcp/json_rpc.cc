#include "mcp/json_rpc.h"

#include <utility>

namespace cordon::mcp {

using nlohmann::json;

namespace {

// Bracket depth outside of strings; stops counting once past the limit.
bool NestingWithinLimit(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

ErrorReply Invalid(json id, std::string message) {
  return ErrorReply{std::move(id), rpc_error::kInvalidRequest, std::move(message)};
}

}  // namespace

bool IsValidId(const json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned();
}

std::string IdKey(const json& id) { return id.dump(); }

Message ParseMessage(std::string_view line) {
  if (!NestingWithinLimit(line)) {
    return ErrorReply{nullptr, rpc_error::kParseError,
                      "Parse error: JSON nested deeper than " + std::to_string(kMaxJsonDepth)};
  }
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return ErrorReply{nullptr, rpc_error::kParseError, "Parse error"};
  if (doc.is_array()) {
    return Invalid(nullptr,
                   "Invalid Request: batches are not supported (removed in MCP 2025-06-18)");
  }
  if (!doc.is_object()) return Invalid(nullptr, "Invalid Request: a message must be an object");

  // The id is read first so that later errors can be matched to the request by the client.
  const auto id_it = doc.find("id");
  const bool has_id = id_it != doc.end();
  json id = nullptr;
  // A client's error reply to something it could not parse carries a null id: a response,
  // never answered (answering it could start an endless exchange of errors).
  const bool null_id_response = has_id && id_it->is_null() && !doc.contains("method") &&
                                (doc.contains("result") || doc.contains("error"));
  if (has_id && !null_id_response) {
    if (!IsValidId(*id_it)) {
      return Invalid(nullptr, "Invalid Request: id must be a string or an integer");
    }
    id = *id_it;
  }
  const auto version = doc.find("jsonrpc");
  if (version == doc.end() || !version->is_string() ||
      version->get_ref<const std::string&>() != "2.0") {
    return Invalid(id, "Invalid Request: jsonrpc must be \"2.0\"");
  }

  const auto method = doc.find("method");
  if (method != doc.end()) {
    if (!method->is_string()) return Invalid(id, "Invalid Request: method must be a string");
    json params = nullptr;
    if (const auto p = doc.find("params"); p != doc.end()) {
      if (!p->is_object()) {
        if (has_id && p->is_array()) {
          return ErrorReply{id, rpc_error::kInvalidParams,
                            "Invalid params: MCP params must be an object"};
        }
        return Invalid(id, "Invalid Request: params must be an object");
      }
      params = std::move(*p);
    }
    std::string name = method->get<std::string>();
    if (has_id) return Request{std::move(id), std::move(name), std::move(params)};
    return Notification{std::move(name), std::move(params)};
  }

  const auto result = doc.find("result");
  const auto error = doc.find("error");
  if (null_id_response) return Response{nullptr, std::nullopt, std::nullopt};
  if (has_id && (result != doc.end()) != (error != doc.end())) {
    Response response{std::move(id), std::nullopt, std::nullopt};
    if (result != doc.end()) response.result = std::move(*result);
    if (error != doc.end()) response.error = std::move(*error);
    return response;
  }
  return Invalid(id, "Invalid Request: neither a request, a notification nor a response");
}

json MakeResult(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json MakeError(const json& id, int code, std::string_view message) {
  return json{{"jsonrpc", "2.0"},
              {"id", id},
              {"error", {{"code", code}, {"message", std::string(message)}}}};
}

json MakeNotification(std::string_view method, json params) {
  json out = {{"jsonrpc", "2.0"}, {"method", std::string(method)}};
  if (!params.is_null()) out["params"] = std::move(params);
  return out;
}

json MakeRequest(const json& id, std::string_view method, json params) {
  json out = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
  if (!params.is_null()) out["params"] = std::move(params);
  return out;
}

}  // namespace cordon::mcp
