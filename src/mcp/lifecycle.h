// The MCP lifecycle: protocol-version negotiation and the initialize result.
//
// cordon speaks the handshake revisions of MCP. The newest, 2025-11-25, is what it answers
// when the client asks for a version it does not know (the spec: the server answers with a
// version it supports and the client decides whether to continue). The stateless revision
// 2026-07-28 has no initialize at all; an initialize asking for it is answered with
// 2025-11-25, which every client of that revision also speaks.
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cordon/capabilities.h"

namespace cordon::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";
inline constexpr std::array<std::string_view, 4> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// The client's version when cordon supports it, otherwise kLatestProtocolVersion.
std::string NegotiateVersion(const nlohmann::json& requested);

// Dates compare as strings: "2025-06-18" >= "2025-03-26".
inline bool VersionAtLeast(std::string_view negotiated, std::string_view since) {
  return negotiated >= since;
}

// What the client declared in initialize, reduced to what cordon uses.
struct ClientFeatures {
  bool elicitation_form = false;  // can answer elicitation/create with a form
  std::string name;               // clientInfo.name, for logs
};
ClientFeatures ReadClientFeatures(const nlohmann::json& initialize_params,
                                  std::string_view negotiated_version);

// The result of initialize: protocolVersion, capabilities (tools, logging, and the sandbox
// capabilities payload under capabilities.experimental["cordon/sandbox"]), serverInfo and
// instructions.
nlohmann::json InitializeResult(std::string_view version, std::string_view server_version,
                                const Capabilities& sandbox);

// The short instructions for the model: what run_command does and what the sandbox allows.
std::string Instructions(const Capabilities& sandbox);

}  // namespace cordon::mcp
