// A hold on the mount namespace of a command's sandbox, so that its teardown is not on the
// command's path.
//
// A command of the zygote runs in a mount namespace of its own (a copy of the session's view
// with a fresh /tmp, HOME and /proc). When its init exits last, the kernel unmounts that whole
// tree in init's exit, with an RCU grace period, before the supervisor learns that init is
// gone: some 150 µs of every command (docs/performance.md). Held from here, the namespace
// outlives init by the time it takes the supervisor to finish the run; the hold is then
// dropped on core::CloseLater's thread, which pays for the unmounting while the run's result
// goes out. Nothing can enter the held namespace: the descriptor is the supervisor's alone
// (O_CLOEXEC), and every process that was in it is dead by the time it is dropped.
#pragma once

#include "exec/launched_process.h"

namespace cordon::zygote {

// Makes `launched` (its init alive and not yet reaped, so that its pid names it) hold its
// init's mount namespace until the LaunchedProcess is destroyed. Best effort: a namespace
// that cannot be opened is not held, and the kernel tears it down in init's exit as before.
void HoldMountNamespace(exec::LaunchedProcess& launched);

}  // namespace cordon::zygote
