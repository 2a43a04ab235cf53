// The escape suite through `cordon mcp` (CORDON_ESCAPE_MCP=1): every sandboxed run is a
// run_command call to a `cordon mcp` started for that run with the case's mode and network,
// as an agent's client starts it, so the same attacks are judged against the session an agent
// keeps. A call that gets no structured result fails its case (it did not run).
#pragma once

#include <string>
#include <vector>

#include "escape_harness.h"

namespace cordon::escape_test {

bool McpRuns();

// Runs `command` (shell text) through a `cordon mcp` with `flags` (after `mcp`), `env`, in the
// fixture's workspace; fills f.output (the command's stdout and stderr, and why it did not run)
// and f.exit_status (run_command's exit_code). The server's pid goes to root/cordon.pid.
void RunThroughMcp(const std::string& cordon, const std::vector<std::string>& flags,
                   const std::vector<std::string>& env, const std::string& command, Fixture& f);

}  // namespace cordon::escape_test
