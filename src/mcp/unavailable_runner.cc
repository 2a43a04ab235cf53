#include "mcp/unavailable_runner.h"

#include <fmt/format.h>

namespace cordon::mcp {

UnavailableRunner::UnavailableRunner(std::string reason, std::filesystem::path directory)
    : reason_(fmt::format("cordon mcp could not start: {}", reason)),
      directory_(std::move(directory)) {
  capabilities_.backend = "none";
  capabilities_.backend_reason = reason_;
  capabilities_.missing = {reason_};
}

RunResult UnavailableRunner::Run(const CommandRequest& /*request*/, bool /*outside_sandbox*/,
                                 const CancelToken& /*cancel*/,
                                 const OutputCallback& /*on_output*/) {
  RunResult result;
  result.status = RunStatus::kSetupFailed;
  result.error = reason_;
  return result;
}

}  // namespace cordon::mcp
