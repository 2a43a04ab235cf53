// Signalling and reaping the process a backend launched, without pid-reuse races: through its
// pidfd when there is one, and always before it is reaped (an unreaped zombie keeps its pid and
// its process group id reserved, so kill() cannot hit a stranger).
#pragma once

#include <sys/types.h>

#include <optional>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"

namespace cordon::exec {

// pidfd_open(pid, 0). An invalid UniqueFd when the kernel has no pidfds (Linux < 5.3); the
// supervisor then falls back to polling waitid(WNOHANG).
core::UniqueFd OpenPidfd(pid_t pid);

// Whether the pidfd's process still exists (signal 0 through it); false when it is gone or
// pidfds do not exist (not Linux).
bool PidfdAlive(int pidfd);

// SIGKILL to the launched process and, for an unsandboxed launch, its whole process group.
// For a sandbox's init this kills every process in the sandbox's PID namespace. Must be called
// before Reap. Errors (already gone) are ignored: the goal is that nothing is left running.
void KillTree(const LaunchedProcess& process);

// SIGKILL to `process.sandbox_init_pidfd` (when valid) and a wait of up to `timeout_ms` until
// it has exited: the kernel empties a PID namespace before its init's exit completes. False
// when it was still there at the deadline.
bool KillAndAwaitSandboxInit(const LaunchedProcess& process, int timeout_ms);

// True once the process has exited (it is a zombie, not yet reaped). Never blocks.
[[nodiscard]] Result<bool> HasExited(const LaunchedProcess& process);

// How the launched process ended, as waitpid reports it.
struct ExitInfo {
  bool signaled = false;
  int code = 0;    // exit code when !signaled
  int signal = 0;  // the signal when signaled
};

// Reaps the process (blocking until it has exited). Fails with ECHILD when it is not a child
// of the caller.
[[nodiscard]] Result<ExitInfo> Reap(const LaunchedProcess& process);

// Decodes a wait status (as written to a status_fd by the sandbox's init).
ExitInfo DecodeWaitStatus(int status);

}  // namespace cordon::exec
