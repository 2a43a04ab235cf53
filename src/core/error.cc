#include "cordon/error.h"

#include "cordon/config.h"
#include "cordon/run.h"

namespace cordon {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kConfig:
      return "config";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kCommandNotFound:
      return "command_not_found";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kSystem:
      return "system";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

const char* SandboxModeName(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kOff:
      return "off";
    case SandboxMode::kReadOnly:
      return "read_only";
    case SandboxMode::kWorkspaceWrite:
      return "workspace_write";
  }
  return "unknown";
}

const char* HomeViewName(HomeView home) {
  switch (home) {
    case HomeView::kReadOnly:
      return "read_only";
    case HomeView::kHidden:
      return "hidden";
    case HomeView::kAuto:
      return "auto";
  }
  return "unknown";
}

const char* ToolCachesName(ToolCaches caches) {
  switch (caches) {
    case ToolCaches::kShared:
      return "shared";
    case ToolCaches::kWorkspace:
      return "workspace";
    case ToolCaches::kOff:
      return "off";
  }
  return "unknown";
}

const char* NetworkPolicyName(NetworkPolicy net) {
  switch (net) {
    case NetworkPolicy::kDeny:
      return "deny";
    case NetworkPolicy::kAllow:
      return "allow";
    case NetworkPolicy::kDomains:
      return "domains";
  }
  return "unknown";
}

const char* BackendChoiceName(BackendChoice b) {
  switch (b) {
    case BackendChoice::kAuto:
      return "auto";
    case BackendChoice::kNative:
      return "native";
    case BackendChoice::kBwrap:
      return "bwrap";
    case BackendChoice::kSeatbelt:
      return "seatbelt";
  }
  return "unknown";
}

const char* RunStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kExited:
      return "exited";
    case RunStatus::kSignaled:
      return "signaled";
    case RunStatus::kTimedOut:
      return "timed_out";
    case RunStatus::kDenied:
      return "denied";
    case RunStatus::kSetupFailed:
      return "setup_failed";
  }
  return "unknown";
}

int RunResult::CliExitCode() const {
  switch (status) {
    case RunStatus::kExited:
      return exit_code;
    case RunStatus::kSignaled:
      return 128 + signal;
    case RunStatus::kTimedOut:
      return 124;
    case RunStatus::kDenied:
      return 126;
    case RunStatus::kSetupFailed:
      return 125;
  }
  return 125;
}

}  // namespace cordon
