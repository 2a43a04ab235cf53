// The definition of the run_command tool as tools/list returns it: description, inputSchema
// and (from 2025-06-18) outputSchema. The schemas are the contract documented in docs/mcp.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "cordon/capabilities.h"

namespace cordon::mcp {

inline constexpr std::string_view kRunCommandTool = "run_command";

nlohmann::json RunCommandInputSchema();
// The shape of structuredContent: report::RunResultToJson plus truncated, reason and
// outside_sandbox.
nlohmann::json RunCommandOutputSchema();
// The whole tool entry. The description repeats the sandbox in force (mode, network) so the
// model sees it even when the client does not surface the initialize instructions.
nlohmann::json RunCommandTool(const Capabilities& sandbox, std::string_view protocol_version);

}  // namespace cordon::mcp
