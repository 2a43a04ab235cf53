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
//
// The joiner opens the descriptor (command_init.h), not the supervisor through init's /proc
// entry: that needs ptrace read access to init, which an unprivileged supervisor lacks while
// init is non-dumpable, between the command's start and init's exec of cordon-init.
#pragma once

#include "core/unique_fd.h"
#include "exec/launched_process.h"

namespace cordon::zygote {

// Makes `launched` hold `mount_ns` (its init's mount namespace) until the LaunchedProcess is
// destroyed. Best effort: without a descriptor (the joiner could not open it) nothing is
// held, and the kernel tears the namespace down in init's exit as before.
void HoldMountNamespace(exec::LaunchedProcess& launched, core::UniqueFd mount_ns);

}  // namespace cordon::zygote
