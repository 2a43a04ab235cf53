// What the MCP server needs from cordon to run a command. The server depends on this small
// interface, not on Session, so the protocol layer is tested with a fake runner; SessionRunner
// (session_runner.h) adapts the real cordon::Session.
#pragma once

#include <chrono>
#include <filesystem>

#include "cordon/capabilities.h"
#include "cordon/run.h"
#include "cordon/session.h"
#include "mcp/cancel_token.h"

namespace cordon::mcp {

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;

  // Runs one command through the command policy and the sandbox and returns when it ended.
  // `outside_sandbox`: a person approved running this one command with mode off (the policy
  // still applies). When `cancel` fires the runner kills the command's whole tree promptly.
  // Called from several worker threads at once. Never throws.
  virtual RunResult Run(const CommandRequest& request, bool outside_sandbox,
                        const CancelToken& cancel, const OutputCallback& on_output) = 0;

  virtual Capabilities GetCapabilities() const = 0;
  // Canonical; relative cwd arguments are resolved against it.
  virtual const std::filesystem::path& Workspace() const = 0;
  // The configured timeout: a tools/call may ask for less, never for more.
  virtual std::chrono::milliseconds MaxTimeout() const = 0;
  // config.sandbox.allow_outside_sandbox: whether a person may be asked at all.
  virtual bool AllowsOutsideSandbox() const = 0;
};

}  // namespace cordon::mcp
