// Where `cordon mcp` records why it could not start (docs/mcp.md): clients show a server's
// stderr in places users rarely look, or not at all, so the reason is also appended to
// $XDG_STATE_HOME/cordon/mcp.log (default ~/.local/state/cordon/mcp.log), kept below 1 MiB by
// moving a full log to mcp.log.1.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "cordon/error.h"

namespace cordon::cli {

// The log's path from the environment; none without XDG_STATE_HOME or HOME.
std::optional<std::filesystem::path> McpLogPath();

// Appends "TIME cordon mcp (pid N) in DIR: MESSAGE\n" to `log`, creating its directory (0700)
// and the file (0600).
Result<void> AppendMcpLog(const std::filesystem::path& log, const std::filesystem::path& dir,
                          std::string_view message);

}  // namespace cordon::cli
