#include "mcp/session_runner.h"

#include <utility>

namespace cordon::mcp {
SessionRunner::SessionRunner(Session session)
    : session_(std::move(session)), capabilities_(session_.GetCapabilities()) {}

RunResult SessionRunner::Run(const CommandRequest& request, bool outside_sandbox,
                             const CancelToken& cancel, const OutputCallback& on_output) {
  // Session::Run kills the whole tree when the token's descriptor becomes readable.
  CommandRequest attached = request;
  attached.cancel_fd = cancel.fd();
  if (!outside_sandbox || session_.config().sandbox.mode == SandboxMode::kOff) {
    return session_.Run(attached, on_output);
  }
  Config unconfined = session_.config();
  unconfined.sandbox.mode = SandboxMode::kOff;
  Result<Session> once = Session::Create(std::move(unconfined), session_.workspace());
  if (!once) {
    RunResult failed;
    failed.status = RunStatus::kSetupFailed;
    failed.decision = session_.Check(request.shell_text.value_or(""));
    failed.error = "could not prepare the unsandboxed run: " + once.error().message;
    return failed;
  }
  return once->Run(attached, on_output);
}

}  // namespace cordon::mcp
