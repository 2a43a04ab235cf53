// Mode `off`: starts the command with no sandbox at all (the user asked for it explicitly).
//
// The command still gets the supervisor's process hygiene, so a timeout or exit cleans up:
//   - a new session (setsid): it leads its own process group, so kill(-pgid) reaches every
//     process it starts that stays in the group, and it has no controlling terminal, so it
//     cannot read from or inject into the caller's terminal;
//   - a parent-death signal (SIGKILL) so it does not outlive a supervisor that dies;
//   - stdio from `stdio`, every other descriptor closed, signal mask and dispositions reset.
// What it does NOT give: a process that leaves the group (setsid, a double fork into a new
// session) survives the command and its timeout. The sandboxed modes close that hole with a
// PID namespace, whose init takes every process down with it.
#pragma once

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "limits/cgroup.h"
#include "plan/launch_plan.h"

namespace cordon::exec {

// Starts plan.argv with exactly plan.env in plan.cwd. argv[0] without a slash is looked up in
// the PATH of plan.env (not the caller's). Returns once execve succeeded; on failure the child
// has been reaped and the error names the step ("execve(/bin/x): ...", "chdir(/w): ...").
// The result has kill_process_group set and no status_fd (pid is the command itself).
// The resource limits apply here too: the command joins `cgroup` (the run's cgroup, owned by
// the caller) first and sets plan.limits.rlimits before execve.
[[nodiscard]] Result<LaunchedProcess> SpawnUnsandboxed(const plan::LaunchPlan& plan,
                                                       const StdioFds& stdio,
                                                       const limits::CgroupAttach& cgroup = {});

}  // namespace cordon::exec
