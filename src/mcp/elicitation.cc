#include "mcp/elicitation.h"

#include <fmt/format.h>

#include "mcp/json_rpc.h"
#include "mcp/lifecycle.h"

namespace cordon::mcp {

using nlohmann::json;

json EscapeElicitationParams(std::string_view command, std::string_view justification,
                             std::string_view cwd, std::string_view protocol_version) {
  std::string message = fmt::format(
      "The AI agent asks to run ONE command OUTSIDE cordon's sandbox: it will be able to write, "
      "read and connect anywhere your user can. The command policy still applies.\n\n"
      "Command:\n{}\n\nWorking directory: {}\n\nAgent's justification:\n{}\n\n"
      "Approve only if you understand the command. It runs once; nothing is remembered.",
      command, cwd, justification);
  json schema = {{"type", "object"},
                 {"properties",
                  {{"approve",
                    {{"type", "boolean"},
                     {"title", "Run this command outside the sandbox"},
                     {"description", "Check to run it once without the sandbox"},
                     {"default", false}}}}},
                 {"required", json::array({"approve"})}};
  json params = {{"message", std::move(message)}, {"requestedSchema", std::move(schema)}};
  if (VersionAtLeast(protocol_version, "2025-11-25")) params["mode"] = "form";
  return params;
}

EscapeApproval AskEscapeApproval(const ElicitationContext& context, std::string_view command,
                                 std::string_view justification, std::string_view cwd,
                                 const CancelToken& cancel) {
  const json id = context.pending.Register();
  context.sink.Send(
      MakeRequest(id, "elicitation/create",
                  EscapeElicitationParams(command, justification, cwd, context.protocol_version)));
  std::optional<Response> reply =
      context.pending.Wait(id, std::chrono::steady_clock::now() + context.timeout, cancel);

  if (!reply) {
    // Tell the client to take its prompt down: the answer would no longer be used.
    const bool timed_out = !cancel.cancelled();
    context.sink.Send(MakeNotification(
        "notifications/cancelled",
        {{"requestId", id}, {"reason", timed_out ? "approval timed out" : "call cancelled"}}));
    if (timed_out) {
      return {false, "timeout",
              fmt::format("nobody answered the approval request within {} s, so the command did "
                          "not run",
                          context.timeout.count() / 1000)};
    }
    return {false, "cancelled", "the call was cancelled while waiting for approval"};
  }
  if (reply->error) {
    const json& error = *reply->error;
    std::string text =
        error.is_object() && error.contains("message") && error["message"].is_string()
            ? error["message"].get<std::string>()
            : error.dump();
    return {
        false, "error",
        fmt::format("the client could not ask the person ({}), so the command did not run", text)};
  }
  const json& result = *reply->result;
  const std::string action =
      result.is_object() && result.contains("action") && result["action"].is_string()
          ? result["action"].get<std::string>()
          : std::string();
  if (action == "accept") {
    const auto content = result.find("content");
    const bool approve = content != result.end() && content->is_object() &&
                         content->contains("approve") && (*content)["approve"].is_boolean() &&
                         (*content)["approve"].get<bool>();
    if (approve) return {true, "", ""};
    return {false, "declined",
            "the person answered but did not approve running it outside the sandbox"};
  }
  if (action == "decline") {
    return {false, "declined", "the person declined to run it outside the sandbox"};
  }
  if (action == "cancel") {
    return {false, "dismissed", "the person dismissed the approval request without approving"};
  }
  return {false, "error", "the client sent an unrecognised answer to the approval request"};
}

}  // namespace cordon::mcp
