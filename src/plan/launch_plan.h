// LaunchPlan: everything a backend needs to start one command, computed purely (no system
// calls beyond realpath/stat of configured paths) from the pinned Config, the kernel probe and
// the request. Backends only replay a plan; they make no policy decisions of their own.
//
// Contract shared by src/plan (owner), src/linux (native backend), src/exec and src/session.
// Fields may be added by src/plan; the ones below are relied on by src/exec and src/session.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/config.h"
#include "cordon/error.h"
#include "cordon/run.h"
#include "linux/kernel_features.h"

namespace cordon::plan {

struct PlanRequest {
  std::vector<std::string> argv;          // already resolved: shell text becomes sh -c TEXT
  std::filesystem::path workspace;        // canonical launch directory (the writable root)
  std::filesystem::path cwd;              // canonical, inside the workspace
  std::vector<std::string> caller_env;    // "NAME=value" of the caller (environ)
  std::filesystem::path caller_home;      // the real HOME, for hidden credential paths
};

struct LaunchPlan {
  bool sandboxed = true;                  // false only in mode off
  std::vector<std::string> argv;
  std::vector<std::string> env;           // the complete, minimal environment ("NAME=value")
  std::filesystem::path cwd;
  std::filesystem::path workspace;
  Enforcement enforcement;                // what this plan enforces, layer by layer
  // Backend-specific detail (mounts, Landlock rules, seccomp settings, ...) is added below by
  // src/plan as the native backend needs it.
};

// Fails closed (kUnavailable) when the config asks for a guarantee that `features` cannot give,
// with a message naming what is missing and how to fix it.
[[nodiscard]] Result<LaunchPlan> Plan(const Config& config,
                                      const linux_native::KernelFeatures& features,
                                      const PlanRequest& request);

// The capabilities payload for `config` on a machine with `features` (cordon status, MCP
// initialize). Consistent with Plan: `missing` is non-empty exactly when Plan would refuse.
Capabilities DescribeCapabilities(const Config& config,
                                  const linux_native::KernelFeatures& features);

}  // namespace cordon::plan
