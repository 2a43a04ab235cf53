// The supervisor's half of handing a command to a prepared sandbox (the wire format is
// linux/exec_wire.h; the other half, cordon-init --exec, is linux/exec_stub.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "linux/exec_wire.h"

namespace cordon::linux_native {

// The supervisor's half (the stub's is exec_stub.cc).
struct ExecRequest {
  std::string cwd;
  std::vector<std::string> argv;        // not empty
  std::vector<std::string> env;         // "NAME=value"
  std::vector<std::string> candidates;  // not empty: ExecCandidates(argv[0], env)
  exec::StdioFds stdio;                 // -1: the prepared /dev/null stays
};

// Sends `request` on `socket`. kUnavailable (errno EPIPE or ECONNRESET) when the other end was
// gone before it took anything: nothing ran. kInvalidArgument when it exceeds the bounds.
[[nodiscard]] Result<void> SendExecRequest(int socket, const ExecRequest& request);

// After SendExecRequest: nullopt once the command's execve succeeded (EOF: the socket closed
// on exec), else the stub's report. kUnavailable when the process died with part of the
// request unread (nothing ran).
[[nodiscard]] Result<std::optional<ExecFailure>> ReadExecOutcome(int socket);

}  // namespace cordon::linux_native
