// Finding cordon-resolver, the program that answers a network-by-domain sandbox's lookups
// (src/resolver/, docs/decisions/0051-resolver-process.md). Looked up and trust-checked as
// helper_program.h says; its supervisor starts it (exec/resolver_process.h) from a sealed copy
// in memory, taken once per process: it runs outside the sandbox, so no command — of this run
// or an earlier one in a long-lived server — may change what runs by writing to the file.
#pragma once

#include <filesystem>
#include <string>

#include "cordon/error.h"
#include "plan/launch_plan.h"

namespace cordon::linux_native {

inline constexpr const char* kResolverName = "cordon-resolver";

// Process-wide: later launches use cordon-resolver at `path` only (still trust-checked); empty
// restores the default search. For test binaries and embedders whose executable does not sit
// beside it. Not settable from any config or environment.
void SetResolverPath(std::filesystem::path path);

// The program to start for `plan`'s run: a descriptor (close-on-exec, valid for the process's
// life) of the sealed copy, or kUnavailable saying what is missing and how to fix it — none
// found or trusted, the file inside one of `plan`'s writable binds, or memfds that may not be
// run (vm.memfd_noexec=2). A run that asked for network by domain is refused then, never run
// with a network it did not ask for.
[[nodiscard]] Result<int> ResolverProgramFor(const plan::LaunchPlan& plan);

// For diagnostics: the usable resolver's canonical path (empty when there is none), and why
// there is none.
[[nodiscard]] std::filesystem::path ResolverPath();
[[nodiscard]] std::string ResolverProblem();

}  // namespace cordon::linux_native
