// Finding cordon-init, the program the sandbox's PID 1 execs once the command has started
// (init_reaper_main.cc, docs/decisions/0021-init-reaper.md).
//
//   int fd = InitReaperFdFor(plan);  // in the parent; -1: init keeps its in-process loop
//
// The binary is looked up once per process (next to the running executable, in
// ../libexec/cordon, or in the build tree's src/linux), trust-checked like bubblewrap
// (core/trusted_path.h) and held open (O_PATH): init execs the descriptor, never a path the
// sandbox's mount view could change. Without a usable one the runs are the same, only slower:
// init then waits for the command itself.
#pragma once

#include <filesystem>

#include "plan/launch_plan.h"

namespace cordon::linux_native {

inline constexpr const char* kInitReaperName = "cordon-init";

// Process-wide: later launches use cordon-init at `path` only (still trust-checked); empty
// restores the default search. For test binaries and embedders whose executable does not sit
// beside it. Not settable from any config or environment.
void SetInitReaperPath(std::filesystem::path path);

// The reaper's O_PATH descriptor (close-on-exec, owned by this module, valid for the process's
// life), or -1 when none was found, it is untrusted, `plan` lacks user, mount or PID namespace
// (then init must clean up on the host itself), or `plan` binds a writable root containing it.
[[nodiscard]] int InitReaperFdFor(const plan::LaunchPlan& plan);

// Why the last lookup found no usable reaper ("" when it did): for diagnostics and tests.
[[nodiscard]] std::string InitReaperProblem();

// The usable reaper's canonical path (empty when there is none): for diagnostics.
[[nodiscard]] std::filesystem::path InitReaperPath();

}  // namespace cordon::linux_native
