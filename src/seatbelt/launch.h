// Starts one command under Seatbelt: `sandbox-exec -p PROFILE -D NAME=PATH ... -- ARGV`
// (docs/decisions/0020). No shell anywhere: sandbox-exec is executed directly and execs the
// command itself.
//
//   Result<exec::LaunchedProcess> p = seatbelt::Launch(plan, stdio, "/usr/bin/sandbox-exec");
//   exec::Supervise(std::move(*p), ...);   // removes the private directory when it is done
//
// Per command the launcher creates a private directory (mkdtemp, 0700, `home` and `tmp`
// inside, both 0700): macOS has no private tmpfs, so HOME and TMPDIR point there and the
// profile lets the command write it. The LaunchedProcess owns the directory
// (LaunchedProcess::resource): the supervisor destroys it after the command was reaped and its
// process group killed, which removes the tree; a failed launch removes it at once.
//
// Process hygiene is the unsandboxed spawn's (exec/spawn_unsandboxed.h): a new session and
// process group (the supervisor kills -pgid), stdio from `stdio`, every other descriptor
// closed, signals reset, the plan's rlimits. macOS has no PID namespace: a process that leaves
// the group (setsid) survives the run.
#pragma once

#include <filesystem>

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "plan/launch_plan.h"

namespace cordon::seatbelt {

struct LaunchOptions {
  // sandbox-exec itself; tests pass a fake (never from config or the environment).
  std::filesystem::path sandbox_exec = "/usr/bin/sandbox-exec";
  // Where the per-command private directory is created (canonicalised: /tmp is a symlink to
  // /private/tmp on macOS).
  std::filesystem::path private_base = "/tmp";
};

// Starts plan.argv confined by the profile rendered from `plan`, with plan.env except HOME and
// TMPDIR (the private directory's `home` and `tmp`), in plan.cwd. Fails (a setup error: nothing
// ran) when the private directory cannot be made or sandbox-exec cannot be executed; the
// command's own failure to start is reported by sandbox-exec as the command's exit status.
[[nodiscard]] Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan,
                                                   const exec::StdioFds& stdio,
                                                   const LaunchOptions& options = {});

}  // namespace cordon::seatbelt
