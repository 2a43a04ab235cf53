// ADR 0064 over MCP: asking the person, through the client's elicitation/create, whether one
// command may run outside the sandbox. Only an explicit "accept" with approve=true approves;
// decline, cancel, a malformed or error reply, a timeout, a cancelled tools/call and a client
// without the elicitation capability all mean "do not run", each with its own reason.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "mcp/cancel_token.h"
#include "mcp/message_sink.h"
#include "mcp/pending_requests.h"

namespace cordon::mcp {

struct EscapeApproval {
  bool approved = false;
  std::string why;     // short id when refused: "declined", "cancelled", "timeout", ...
  std::string reason;  // one sentence for the model
};

struct ElicitationContext {
  MessageSink& sink;
  PendingRequests& pending;
  std::string protocol_version;  // negotiated: decides whether "mode": "form" is sent
  std::chrono::milliseconds timeout;
};

// The elicitation/create params: the exact command, the justification and the sandbox that
// will not apply, and a form with one boolean "approve".
nlohmann::json EscapeElicitationParams(std::string_view command, std::string_view justification,
                                       std::string_view cwd, std::string_view protocol_version);

// Sends the request and waits for the answer (blocking the calling worker thread only).
EscapeApproval AskEscapeApproval(const ElicitationContext& context, std::string_view command,
                                 std::string_view justification, std::string_view cwd,
                                 const CancelToken& cancel);

}  // namespace cordon::mcp
