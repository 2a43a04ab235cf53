// The descriptors a command's stdio is made of: pipes for stdout and stderr (read by the
// supervisor) and /dev/null for stdin.
//
// Every descriptor is O_CLOEXEC: the backend dup2()s the write ends onto 1 and 2 in the child,
// so no other process (including a command that another thread launches at the same moment)
// keeps a copy past its exec. The caller closes its write ends right after the launch; the
// supervisor then sees EOF once every process holding them is gone.
#pragma once

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"

namespace cordon::exec {

struct CommandPipes {
  core::UniqueFd stdout_read;
  core::UniqueFd stdout_write;
  core::UniqueFd stderr_read;
  core::UniqueFd stderr_write;

  // Closes the write ends; call once the child holds its own copies (after the launch).
  void CloseWriteEnds() {
    stdout_write.Reset();
    stderr_write.Reset();
  }
};

// Creates both pipes. The read ends are non-blocking (the supervisor polls them) and sized up
// (F_SETPIPE_SZ, best effort) so a chatty command rarely waits on the supervisor.
[[nodiscard]] Result<CommandPipes> CreateCommandPipes();

// /dev/null opened read-only and O_CLOEXEC: the stdin of every command unless the caller
// passes its own descriptor.
[[nodiscard]] Result<core::UniqueFd> OpenDevNull();

// The StdioFds a backend needs for `pipes` with `stdin_fd` as stdin. Borrowed descriptors: the
// pipes and stdin_fd must outlive the launch.
StdioFds MakeStdio(const CommandPipes& pipes, int stdin_fd);

// Whether a caller's output sink that cordon need not see (no capture) is given to the command
// itself, as it would be without cordon (decision 0047): a pipe only. Never a terminal (its
// ioctls reach the caller's session), a socket (descriptors could be passed through it) or a
// file (the command could change its mode or read it back through /proc/self/fd); those go
// through the supervisor (exec/pass_through.h).
bool GivenDirectly(int sink);

}  // namespace cordon::exec
