// Test helper: starts a command the way the native backend will once the limits are wired in
// (join the run's cgroup, apply the rlimits, exec), without the rest of the sandbox, and hands
// it to the real supervisor.
#pragma once

#include <string>
#include <vector>

#include "cordon/run.h"
#include "exec/supervisor.h"
#include "limits/cgroup.h"
#include "limits/resource_limits.h"
#include "support/host_files.h"

namespace cordon::limits::testing {

struct LimitedRun {
  const RunCgroup* cgroup = nullptr;  // joined before exec when set
  ResourceLimits rlimits;
  std::chrono::milliseconds timeout{std::chrono::seconds(20)};
  bool cpu_limited = false;
};

// Runs argv (execv: argv[0] is a path) under `run` and supervises it to the end.
RunResult RunLimited(const std::vector<std::string>& argv, const LimitedRun& run,
                     RunCgroup* cgroup_for_supervisor);

// CORDON_TEST_MUST_WORK=1 (CI): a missing feature fails instead of skipping (tests/support).
using test_support::MustWork;

}  // namespace cordon::limits::testing
