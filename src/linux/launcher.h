// The native Linux backend's entry point: builds the sandbox described by a LaunchPlan and
// execs the command inside it.
#pragma once

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "plan/launch_plan.h"

namespace cordon::linux_native {

// Starts `plan` (plan.sandboxed must be true). Returns once the command's execve succeeded, or
// with the error of the first setup step that failed ("mount(/x, MS_BIND): EPERM"); in that
// case nothing ran and no process is left behind. The returned pid is the sandbox's init
// (PID 1 of its PID namespace); killing it kills the whole sandbox.
[[nodiscard]] Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan,
                                                   const exec::StdioFds& stdio);

}  // namespace cordon::linux_native
