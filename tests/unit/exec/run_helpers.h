// Test helpers: start a command unsandboxed (mode off) and supervise it, as Session::Run does.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"
#include "exec/supervisor.h"
#include "plan/launch_plan.h"

namespace cordon::exec::testing {

plan::LaunchPlan MakePlan(std::vector<std::string> argv,
                          std::vector<std::string> env = {"PATH=/usr/bin:/bin"},
                          std::filesystem::path cwd = "/");

// Spawn + Supervise. Errors of the spawn are returned as is.
Result<RunResult> SpawnAndSupervise(const plan::LaunchPlan& plan,
                                    const SuperviseOptions& options = {});

// True when `pid` no longer exists or is a zombie, waiting up to `wait` for it to go.
bool ProcessGone(pid_t pid, std::chrono::milliseconds wait = std::chrono::seconds(3));

}  // namespace cordon::exec::testing
