// One command request and the value a run ends as.
//
// A run always ends as a RunResult (never an exception): exited, signaled, timed out, denied by
// policy, or setup_failed (cordon could not build the sandbox that was asked for, and therefore
// did not run the command at all: fail closed).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy.h"

namespace cordon {

struct CommandRequest {
  // Either argv (run directly) or shell text (run as `/bin/sh -c TEXT`). Exactly one is set.
  std::vector<std::string> argv;
  std::optional<std::string> shell_text;
  // Working directory of the command; must be inside the workspace. Empty: the workspace.
  std::filesystem::path cwd;
  // Overrides the session's timeout for this command when set.
  std::optional<std::chrono::milliseconds> timeout;
  // Standard input of the command: -1 means /dev/null. Otherwise a descriptor the caller keeps
  // owning: a terminal is the command's stdin itself (a person running `cordon run`
  // interactively); anything else (a pipe, a file, a socket) is read by cordon while the
  // command runs and copied into a pipe of the command's own, never handed over (through
  // /proc/self/fd/0 the command could reopen it for writing).
  int stdin_fd = -1;
  // Cancellation: when this descriptor (owned by the caller, e.g. an eventfd) becomes readable,
  // Run kills the command's whole process tree at once and returns kSignaled with SIGKILL and
  // error "cancelled". Already readable at the start: nothing is launched. -1: not cancellable.
  int cancel_fd = -1;
  // false: the output is only streamed to the OutputCallback given to Session::Run, and the
  // result's stdout_data and stderr_data carry byte counts but no text (nothing is truncated).
  // For a caller that shows the output as it comes and never looks at it again (`cordon run`
  // without --json): the supervisor then keeps no copy of up to limits.output_bytes per stream.
  bool capture_output = true;
  // Where stdout and stderr go as they arrive, instead of the OutputCallback: descriptors the
  // caller keeps owning (`cordon run` passes its own stdout and stderr). -1: that stream goes
  // to the callback. With capture_output false a pipe is given to the command itself as that
  // stream (decision 0047: no hop through cordon; its reader going away is the command's
  // SIGPIPE); into a file or a socket the bytes move from the command's pipe with splice(2),
  // never copied through cordon's memory; a terminal gets them read and written. A descriptor
  // whose reader is gone ends the stream, and the command's next write fails as it would.
  int stdout_fd = -1;
  int stderr_fd = -1;
};

enum class RunStatus { kExited, kSignaled, kTimedOut, kDenied, kSetupFailed };

// Which configured limit ended a command (RunResult::limit) or was reached during it
// (RunResult::limits_reached). docs/limits.md.
enum class RunLimit {
  kNone,
  kTimeout,    // limits.timeout_seconds: the tree was killed at the deadline
  kOutput,     // limits.output_bytes: output was cut to its head and tail (never ends a run)
  kMemory,     // limits.memory_bytes: the cgroup's OOM killer killed the command
  kProcesses,  // limits.processes: a fork/clone failed (EAGAIN) at the limit
  kCpu,        // limits.cpu_seconds: RLIMIT_CPU's SIGXCPU ended the command
};

// "none", "timeout", "output", "memory", "processes", "cpu".
constexpr const char* RunLimitName(RunLimit limit) {
  switch (limit) {
    case RunLimit::kNone:
      return "none";
    case RunLimit::kTimeout:
      return "timeout";
    case RunLimit::kOutput:
      return "output";
    case RunLimit::kMemory:
      return "memory";
    case RunLimit::kProcesses:
      return "processes";
    case RunLimit::kCpu:
      return "cpu";
  }
  return "none";
}

// The limit's key in the config's `limits` object: "timeout_seconds", "output_bytes",
// "memory_bytes", "processes", "cpu_seconds"; "" for kNone.
constexpr const char* RunLimitConfigKey(RunLimit limit) {
  switch (limit) {
    case RunLimit::kTimeout:
      return "timeout_seconds";
    case RunLimit::kOutput:
      return "output_bytes";
    case RunLimit::kMemory:
      return "memory_bytes";
    case RunLimit::kProcesses:
      return "processes";
    case RunLimit::kCpu:
      return "cpu_seconds";
    case RunLimit::kNone:
      break;
  }
  return "";
}

// Which layers of the sandbox were in force for a run (or would be, in a capabilities report).
struct Enforcement {
  std::string backend;      // "native", "bwrap", "seatbelt", "none"
  bool filesystem = false;  // writes are confined as the mode says
  bool network = false;     // network deny is enforced (false when network is allowed)
  bool user_namespace = false;
  bool mount_namespace = false;
  bool pid_namespace = false;
  bool net_namespace = false;
  bool ipc_namespace = false;
  int landlock_abi = 0;  // 0 when Landlock was not applied
  bool seccomp = false;
  bool capabilities_dropped = false;
  bool no_new_privs = false;
};

// Something cordon refused the command, told exactly by the layer that refused it (never
// guessed from the command's output; docs/denials.md): the run's `denials`.
struct Denial {
  // "command" (policy), "connect", "dns", "unix_socket", "limit", ...
  std::string kind;
  // What the command named: "93.184.216.34:443", "/run/docker.sock", "timeout", the command.
  std::string target;
  // "policy", "network", "seccomp", "landlock", "limits".
  std::string layer;
  // The setting or built-in rule that decided: "sandbox.network: deny", "limits.memory_bytes".
  std::string rule;
  // What would allow it, or "by design: " and the alternative. Never a widening to a secret
  // store, the home, `/` or a protected path.
  std::string fix;
  bool operator==(const Denial&) const = default;
};

struct CapturedOutput {
  std::string data;                   // head, then a marker line, then tail when truncated
  std::uint64_t total_bytes = 0;      // bytes the command wrote
  std::uint64_t truncated_bytes = 0;  // bytes dropped from the middle
};

struct RunResult {
  RunStatus status = RunStatus::kSetupFailed;
  int exit_code = 0;  // kExited: the command's code
  int signal = 0;     // kSignaled / kTimedOut: the signal that ended it
  Decision decision;  // the policy decision (always set)
  // kSetupFailed: what is missing and how to fix it; kExited with 127 or 126: why the command
  // could not be executed in the sandbox (not found, not executable).
  std::string error;
  CapturedOutput stdout_data;
  CapturedOutput stderr_data;
  std::chrono::microseconds duration{0};
  Enforcement enforcement;
  // The limit that ended the command (kNone: it ended on its own, by a signal from inside, or
  // was cancelled). A timeout is also kTimedOut; a memory or cpu kill is kSignaled.
  RunLimit limit = RunLimit::kNone;
  // Every limit the command ran into, the one that ended it included (e.g. kProcesses for a
  // fork bomb that was then ended by the timeout, kOutput for truncated output).
  std::vector<RunLimit> limits_reached;
  // What cordon refused during the run, each once, in the order met (at most kMaxDenials).
  std::vector<Denial> denials;
  static constexpr std::size_t kMaxDenials = 32;

  // The exit code the CLI uses: own code; 124 timeout; 125 setup; 126 denied; 128+N signal.
  int CliExitCode() const;
};

const char* RunStatusName(RunStatus status);

}  // namespace cordon
