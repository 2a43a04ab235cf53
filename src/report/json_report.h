// JSON forms of cordon's public values: the policy Decision, a RunResult and the Capabilities
// payload. One definition shared by `cordon check/run/status --json` and the MCP server, so
// every interface reports the same fields (documented in docs/capabilities.md and
// docs/cli.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/policy.h"
#include "cordon/run.h"

namespace cordon::report {

nlohmann::json DecisionToJson(const Decision& decision);
nlohmann::json EnforcementToJson(const Enforcement& enforcement);
nlohmann::json RunResultToJson(const RunResult& result);
nlohmann::json CapabilitiesToJson(const Capabilities& capabilities);
// {"memory_bytes": {"value": N, "enforced": bool, "mechanism": "..." | null}, ...}
nlohmann::json LimitsToJson(const std::vector<LimitEnforcement>& limits);

// Serialises without throwing: invalid UTF-8 in strings (command output) is replaced.
std::string Dump(const nlohmann::json& value, int indent = -1);

}  // namespace cordon::report
