// The background tools of every MCP session (decision 0043, docs/mcp.md): start_background
// starts a command that outlives the call (a dev server, a watcher) and answers with its id;
// read_background returns its output since the last read and whether it still runs;
// stop_background kills its whole tree. Their tools/list entries and their calls, from
// arguments to the CallToolResult; the commands themselves live in BackgroundJobs.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "cordon/capabilities.h"
#include "mcp/background_jobs.h"
#include "mcp/cancel_token.h"
#include "mcp/command_runner.h"

namespace cordon::mcp {

inline constexpr std::string_view kStartBackgroundTool = "start_background";
inline constexpr std::string_view kReadBackgroundTool = "read_background";
inline constexpr std::string_view kStopBackgroundTool = "stop_background";

bool IsBackgroundTool(std::string_view name);

// What a server started in one command means for the next ones, in the sandbox in force: one
// sentence for the model.
std::string LoopbackNote(const Capabilities& sandbox);

// The three tools/list entries.
nlohmann::json BackgroundTools(const Capabilities& sandbox, std::string_view protocol_version);

// One call of the tool `name` (one of the three), from its arguments to the CallToolResult.
nlohmann::json BackgroundCall(std::string_view name, const nlohmann::json& arguments,
                              BackgroundJobs& jobs, const CommandRunner& runner,
                              const CancelToken& cancel);

}  // namespace cordon::mcp
