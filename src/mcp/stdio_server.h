// The stdio transport: reads newline-delimited JSON-RPC from `in_fd`, writes replies to
// `out_fd`, logs on stderr only. Returns at EOF on `in_fd` (or a read error) after every
// command was cancelled and its worker finished.
#pragma once

#include <cstddef>

#include "mcp/command_runner.h"
#include "mcp/line_framer.h"
#include "mcp/server.h"

namespace cordon::mcp {

struct StdioResult {
  // false: some command did not end within the grace period. The server was then left alive
  // for its workers, and the caller must end the process with _exit (no destructors).
  bool clean = true;
};

// Ignores SIGPIPE for the process (a vanished client turns writes into EPIPE, handled by the
// sink) before serving.
StdioResult ServeStdio(CommandRunner& runner, const ServerOptions& options, int in_fd, int out_fd,
                       std::size_t max_line_bytes = kDefaultMaxLineBytes);

}  // namespace cordon::mcp
