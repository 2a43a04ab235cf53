// The two checklists run between clone and execve: the sandbox's init (PID 1 of its PID
// namespace) and the command process it forks. Each step is commented with why it sits where
// it is. Neither function returns; a failing step reports on the error pipe and _exits(127).
#pragma once

#include "linux/child_context.h"

namespace cordon::linux_native {

// Runs in the process created by clone(CLONE_NEW*): sets up the namespaces and mount view,
// forks the command, waits for it (reaping orphans), writes its wait status to c.status_fd and
// exits, which kills everything left in the PID namespace.
[[noreturn]] void RunInit(const ChildContext& c);

// Runs in the command process: per-process hardening, then execve.
[[noreturn]] void RunCommand(const ChildContext& c);

}  // namespace cordon::linux_native
