// CommandRunner over cordon::Session: the sandboxed session is created once at start; a command
// that a person approved to run outside the sandbox gets a fresh mode-off Session built from
// the same pinned Config (policy, limits, environment unchanged), used for that one command
// and dropped, so nothing about an approval outlives it.
#pragma once

#include "cordon/config.h"
#include "cordon/error.h"
#include "cordon/session.h"
#include "mcp/command_runner.h"

namespace cordon::mcp {

class SessionRunner : public CommandRunner {
 public:
  explicit SessionRunner(Session session);

  RunResult Run(const CommandRequest& request, bool outside_sandbox, const CancelToken& cancel,
                const OutputCallback& on_output) override;
  Capabilities GetCapabilities() const override { return capabilities_; }
  const std::filesystem::path& Workspace() const override { return session_.workspace(); }
  std::chrono::milliseconds MaxTimeout() const override { return session_.config().limits.timeout; }
  bool AllowsOutsideSandbox() const override {
    return session_.config().sandbox.allow_outside_sandbox;
  }

 private:
  Session session_;
  Capabilities capabilities_;  // probed once: the payload initialize reports
};

}  // namespace cordon::mcp
