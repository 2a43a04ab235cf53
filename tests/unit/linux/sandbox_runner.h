// Test helper: runs cordon_probe inside the native sandbox through plan::Plan and
// linux_native::Launch directly (the supervisor is the exec helper's; this is a minimal one:
// stdout through a pipe, stderr inherited, wait for the status from init).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"
#include "linux/kernel_features.h"
#include "plan/launch_plan.h"
#include "support/temp_dir.h"

namespace cordon::testing {

struct ProbeRun {
  int wait_status = -1;  // the command's wait status, as reported by the sandbox's init
  std::string stdout_text;
  std::string line() const;  // first line of stdout, without the newline
};

// The probe once per test binary.
const linux_native::KernelFeatures& Features();

// True when the namespaced native backend works here. When it does not and
// CORDON_TEST_MUST_WORK=1 is set, also records a test failure.
bool NativeSandboxAvailable();

#define CORDON_REQUIRE_NATIVE_SANDBOX()                                                      \
  do {                                                                                       \
    if (!::cordon::testing::NativeSandboxAvailable()) {                                      \
      GTEST_SKIP() << "native sandbox unavailable: " << ::cordon::testing::Features().notes; \
    }                                                                                        \
  } while (0)

std::string ProbePath();
// A copy of the probe inside `workspace` (always visible in the sandbox, unlike a build tree
// under the host's /tmp); returns its path.
std::string StageProbe(const std::filesystem::path& workspace);

// Runs `command` (argv; "probe" as argv[0] is replaced by the probe binary) in `workspace`.
// `caller_home` is the "real" home whose credential paths are hidden.
Result<ProbeRun> RunInSandbox(const Config& config, const std::filesystem::path& workspace,
                              std::vector<std::string> command,
                              std::vector<std::string> caller_env = {},
                              const std::filesystem::path& caller_home = "/nonexistent");

// Launches an already built plan (argv[0] "probe" replaced) and collects the run.
Result<ProbeRun> RunPlan(plan::LaunchPlan launch_plan);

// A fresh directory (canonical) below a parent, /tmp by default (tests/support).
using TempDir = test_support::TempDir;

}  // namespace cordon::testing
