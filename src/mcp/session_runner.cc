#include "mcp/session_runner.h"

#include <utility>

namespace cordon::mcp {
namespace {

// Session::Run learns about cancellation through CommandRequest::cancel_fd (a descriptor that
// becomes readable when the run must end). Until that field exists in include/cordon/run.h
// the request is passed unchanged and a cancelled command runs to its timeout.
template <typename R>
void AttachCancel(R& request, const CancelToken& cancel) {
  if constexpr (requires { request.cancel_fd; }) {
    request.cancel_fd = cancel.fd();
  } else {
    (void)request;
    (void)cancel;
  }
}

}  // namespace

SessionRunner::SessionRunner(Session session)
    : session_(std::move(session)), capabilities_(session_.GetCapabilities()) {}

RunResult SessionRunner::Run(const CommandRequest& request, bool outside_sandbox,
                             const CancelToken& cancel, const OutputCallback& on_output) {
  CommandRequest attached = request;
  AttachCancel(attached, cancel);
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
