// Which mechanism enforces each configured limit on this machine, decided once per command in
// the parent (pure, given the probe). A set limit that no mechanism can enforce refuses the
// run (fail closed); an unset one never does (decision 0007).
//
//   memory_bytes  cgroup memory controller (v2 memory.max or v1 memory.limit_in_bytes) only
//   processes     cgroup pids.max; else RLIMIT_NPROC (+1 for the sandbox's init) when the
//                 sandbox has its own user
//                 namespace and the caller is not global root (Linux >= 5.14 counts it per
//                 user namespace; the kernel never applies it to global root)
//   open_files    RLIMIT_NOFILE        cpu_seconds   RLIMIT_CPU        (always)
//   timeout, output                    the supervisor (always)
#pragma once

#include <vector>

#include "cordon/capabilities.h"
#include "cordon/config.h"
#include "cordon/error.h"
#include "limits/cgroup.h"
#include "limits/resource_limits.h"

namespace cordon::limits {

struct LimitsSupport {
  CgroupSupport cgroups;
  // RLIMIT_NPROC counts only the sandbox's processes when it runs in a user namespace of its
  // own: true when the kernel keeps per-namespace counts (>= 5.14) and we are not global root.
  bool nproc_per_user_namespace = false;
  // False when the cgroup probe was skipped (ProbeLimitsFor with no cgroup-backed limit set):
  // `cgroups` then says nothing about the machine.
  bool cgroups_probed = false;
};

// Probes cgroups (ProbeCgroups) and the kernel version. Once per session, like ProbeKernel.
LimitsSupport ProbeLimits();

// ProbeLimits, but the cgroup probe (which creates and removes a test cgroup) only when
// `config` sets a limit a cgroup may have to enforce (memory_bytes or processes): what a
// session pins at Create, so a run without such limits pays nothing for it.
LimitsSupport ProbeLimitsFor(const LimitsConfig& config);

struct LimitsPlan {
  ResourceLimits rlimits;  // applied in the command process (ApplyResourceLimits)
  CgroupRequest cgroup;    // all zero: no per-run cgroup is needed
  bool needs_cgroup() const { return cgroup.memory_bytes != 0 || cgroup.pids_max != 0; }
};

// `user_namespace`: the plan gives the sandbox its own user namespace. Fails with kUnavailable
// naming the limit, the missing feature and the fix.
[[nodiscard]] Result<LimitsPlan> PlanLimits(const LimitsConfig& config,
                                            const LimitsSupport& support, bool user_namespace);

// The limits section of the capabilities payload; consistent with PlanLimits (a set limit
// with an empty mechanism is exactly what PlanLimits refuses).
std::vector<LimitEnforcement> DescribeLimits(const LimitsConfig& config,
                                             const LimitsSupport& support, bool user_namespace);

}  // namespace cordon::limits
