// The two checklists run between clone and execve: the sandbox's init (PID 1 of its PID
// namespace) and the command process it forks. Each step is commented with why it sits where
// it is. Neither function returns; a failing step reports on the error pipe and _exits(127).
#pragma once

#include "linux/child_context.h"

namespace cordon::linux_native {

// Runs in the process created by clone(CLONE_NEW*): sets up the namespaces and mount view,
// forks the command, waits for it (reaping orphans), writes its wait status to c.status_fd and
// exits, which kills everything left in the PID namespace. = EnterInit, SetUpNamespaces,
// ForkCommandAndWait.
[[noreturn]] void RunInit(const ChildContext& c);

// Runs in the command process: per-process hardening, then execve.
[[noreturn]] void RunCommand(const ChildContext& c);

// The pieces of RunInit, for the per-session zygote (src/zygote), which builds the namespaces
// once and runs only the per-command pieces for each command. A failing step reports on
// c.error_fd and _exits(127).
// Steps 0-2: default signals, the parent-death signal, the parent-still-alive check (and,
// without a PID namespace, the session and subreaper role).
void EnterInit(const ChildContext& c, bool parent_death_signal = true);
// Steps 3-5: id maps, hostname, loopback, mount view (in the namespaces clone created).
void SetUpNamespaces(const ChildContext& c);
// Steps 6-7: non-dumpable, fork the command (RunCommand), reap until it exits, write its
// status to c.status_fd, exit.
[[noreturn]] void ForkCommandAndWait(const ChildContext& c);

// Default signal dispositions and an empty mask (async-signal-safe).
bool ResetSignals();

// Closes every descriptor above 2 except `keep` and `also_keep` (async-signal-safe).
bool CloseOtherFds(int keep, int also_keep = -1);
// The same for up to 8 descriptors in `keep` (negative entries ignored).
bool CloseFdsExcept(const int* keep, int count);

}  // namespace cordon::linux_native
