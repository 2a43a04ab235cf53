// One probe of the kernel features cordon can use, taken once per process (Session::Create)
// and passed along; nothing re-probes per command. Probes are real attempts (e.g. creating a
// user namespace in a throw-away child), not version guesses.
//
// Two depths: ProbeKernel (every `cordon run`, every Session) tries only what decides the
// sandbox's shape, the user namespace, with one clone(CLONE_NEWUSER) child that exits at once;
// the other namespace kinds and the fresh /proc are then assumed and, should the kernel refuse
// one, the launch fails closed with the step that failed (exit 125), never runs with less.
// ProbeKernelThoroughly (`cordon doctor`) tries every kind in a throw-away child.
#pragma once

#include <string>

#include "limits/limits_plan.h"

namespace cordon::linux_native {

struct KernelFeatures {
  bool user_namespace = false;   // unshare(CLONE_NEWUSER) works for this user
  bool mount_namespace = false;  // ... together with CLONE_NEWNS
  bool pid_namespace = false;
  bool net_namespace = false;
  bool ipc_namespace = false;
  bool uts_namespace = false;
  // A fresh procfs can be mounted inside new user+mount+pid namespaces. Fails in containers
  // whose /proc has masked or read-only sub-mounts (the kernel then refuses a new proc mount).
  bool proc_mount = false;
  bool mount_setattr = false;  // recursive read-only binds (Linux >= 5.12)
  int landlock_abi = 0;        // 0: Landlock unavailable
  bool seccomp = false;        // seccomp filter mode available
  bool pidfd = false;          // pidfd_open
  std::string notes;           // human-readable detail from failed probes (for doctor/status)
  // True when mount/pid/net/ipc/uts and proc_mount were inferred from a working user namespace
  // (and the max_*_namespaces sysctls), not tried (ProbeKernel's quick depth).
  bool namespaces_assumed = false;
  // What can enforce the resource limits (cgroups, per-namespace RLIMIT_NPROC). Not filled by
  // ProbeKernel: the cgroup probe creates a cgroup, so Session::Create runs it only when the
  // configuration sets a limit that needs one (ProbeLimitsFor), and `status`/`doctor` always.
  limits::LimitsSupport limits;

  // All the namespaces the native backend's mount view needs (user, mount, pid, /proc).
  bool namespaces_usable() const {
    return user_namespace && mount_namespace && pid_namespace && proc_mount && mount_setattr;
  }
};

// Probes this machine quickly (see above). One short-lived child; never modifies the caller.
KernelFeatures ProbeKernel();

// Probes every namespace kind, the /proc mount and seccomp by real attempts in throw-away
// children (a few ms). Never modifies the calling process.
KernelFeatures ProbeKernelThoroughly();

}  // namespace cordon::linux_native
