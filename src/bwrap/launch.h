// Starts one LaunchPlan under bubblewrap: the counterpart of linux_native::Launch.
//
//   Result<BwrapBinary> bwrap = LocateBwrap({}, writable_roots);      // once per process
//   Result<std::filesystem::path> exec = LocateTrampoline();          // once per process
//   Result<exec::LaunchedProcess> p = LaunchBwrap(plan, stdio, *bwrap, *exec);
//
// Returns once the command's execve succeeded (or with the failure: bwrap's own message when
// its setup failed, the step when Landlock or seccomp could not be applied). The supervisor
// then waits for bwrap and, through sandbox_init_pidfd, for bwrap's init (the whole sandbox);
// the command's exact wait status arrives on status_fd from the trampoline.
// Thread-safe: nothing but fork/exec and descriptors.
#pragma once

#include <filesystem>

#include "bwrap/locate.h"
#include "cordon/error.h"
#include "exec/launched_process.h"
#include "plan/launch_plan.h"

namespace cordon::bwrap {

// cordon-bwrap-exec next to the running executable (build tree) or in ../libexec/cordon
// (installed), or `preferred` alone when non-empty (tests, embedders whose executable is not
// cordon), checked like bwrap itself. Fails (kUnavailable) when absent or untrusted.
[[nodiscard]] Result<std::filesystem::path> LocateTrampoline(
    const std::vector<std::filesystem::path>& writable_roots,
    const std::filesystem::path& preferred = {});

[[nodiscard]] Result<exec::LaunchedProcess> LaunchBwrap(const plan::LaunchPlan& plan,
                                                        const exec::StdioFds& stdio,
                                                        const BwrapBinary& bwrap,
                                                        const std::filesystem::path& trampoline);

}  // namespace cordon::bwrap
