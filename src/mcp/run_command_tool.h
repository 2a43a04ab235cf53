// The run_command tool without any I/O: reading its arguments, turning them into a
// CommandRequest, and turning a RunResult into the CallToolResult the model reads.
//
// Argument mistakes are tool results with isError (MCP 2025-11-25: input validation errors go
// back to the model, which can correct them), not JSON-RPC errors.
#pragma once

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "cordon/error.h"
#include "cordon/run.h"

namespace cordon::mcp {

struct RunCommandArgs {
  std::string command;
  std::string cwd;  // as given; empty: the workspace
  std::optional<double> timeout_seconds;
  bool outside_sandbox = false;
  std::string justification;
};

// kInvalidArgument with a message for the model when a field is missing or mistyped.
[[nodiscard]] Result<RunCommandArgs> ParseRunCommandArgs(const nlohmann::json& arguments);

// Resolves cwd inside `workspace` (canonical) and caps the timeout at `max_timeout`.
[[nodiscard]] Result<CommandRequest> BuildCommandRequest(const RunCommandArgs& args,
                                                         const std::filesystem::path& workspace,
                                                         std::chrono::milliseconds max_timeout);

// One line saying how the run ended ("exit code 2", "NOT RUN: denied [rule]: why", ...), and
// the reason field of structuredContent (empty for a plain exit).
std::pair<std::string, std::string> RunOutcome(const RunResult& result,
                                               std::chrono::milliseconds timeout);

// {content: [{type: text, text}], structuredContent, isError}. isError is true unless the
// command exited with code 0.
nlohmann::json ToolResultFromRun(const RunResult& result, std::string_view command,
                                 bool outside_sandbox, std::chrono::milliseconds timeout);

// A tool result for a call that never reached the runner (bad arguments, too many calls).
nlohmann::json ToolErrorResult(std::string_view text);

// The RunResult of an outside_sandbox request that did not run: status denied, decision
// rule_id "outside_sandbox.<why>" and `reason`, so the result has the usual shape.
RunResult RefusedEscape(std::string_view why, std::string reason);

}  // namespace cordon::mcp
