// Which layers the native backend can use for a config on a machine, and what is missing.
// Shared by Plan and DescribeCapabilities so that `cordon status` and a run never disagree:
// `missing` is non-empty exactly when Plan refuses.
#pragma once

#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/run.h"
#include "linux/kernel_features.h"
#include "plan/backend_probe.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

struct Assessment {
  Enforcement enforcement;     // layers in force (backend "native", "bwrap" or "none")
  std::string backend_reason;  // why that backend (plan/backend_selection.h)
  Namespaces namespaces;
  SocketPolicy sockets = SocketPolicy::kAny;
  bool fallback = false;      // no namespaces: Landlock + seccomp only (docs/decisions/0005)
  bool landlock_tcp = false;  // Landlock denies TCP (network deny without a net namespace)
  // The Seatbelt backend: no namespaces, but the planner still computes the mount view's
  // operations, which the SBPL profile turns into path rules (src/seatbelt/profile.h).
  bool path_rules = false;
  // What the command sees of the real homes: sandbox.home, with kAuto decided (kHidden with a
  // mount namespace, kReadOnly elsewhere); never kAuto.
  HomeView home = HomeView::kReadOnly;
  bool filesystem_enforced = false;
  bool network_enforced = false;
  std::vector<std::string> missing;  // each: what is missing and how to fix it
  // The fallback's protect_git_metadata and protect_host_run_files: given only where the
  // view itself already keeps every protected entry read-only (plan/view_protection.h: cordon
  // inside a sandbox that does); each is what is missing otherwise, and how to fix it.
  std::vector<std::string> missing_unless_view_holds;
  std::vector<std::string> unsupported;  // features cordon does not implement (yet)
};

// `backends`: what the session probed of the other backends (none: only native or none).
Assessment Assess(const Config& config, const linux_native::KernelFeatures& features,
                  const BackendProbes& backends = {});

}  // namespace cordon::plan
