// The bubblewrap backend's argument vector: one LaunchPlan rendered as bwrap options, in the
// plan's replay order, never as a shell string. bwrap builds the namespaces and the mount
// view; what it cannot do itself (Landlock, cordon's seccomp filter) is applied inside by the
// in-sandbox trampoline named in BwrapInvocation, just before the command's execve.
//
//   BwrapInvocation how{.bwrap = "/usr/bin/bwrap", .trampoline = {"/usr/lib/cordon/exec"}};
//   Result<std::vector<std::string>> argv = RenderBwrapArgv(plan, how);
//
// Pure: no system calls, so the output is golden-tested (tests/unit/bwrap/golden/).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cordon/error.h"
#include "plan/launch_plan.h"

namespace cordon::bwrap {

struct BwrapInvocation {
  std::string bwrap;  // absolute path of a trusted bwrap (see locate.h)
  // Words placed between `--` and the command (e.g. cordon's trampoline and its options);
  // empty: bwrap execs the command directly (only for plans without Landlock and seccomp).
  std::vector<std::string> trampoline;
  // Host files bound read-only into the sandbox right after /dev exists ({source, target}), e.g.
  // the trampoline itself at a fixed path that no private tmpfs or mask can hide.
  std::vector<std::pair<std::string, std::string>> extra_ro_binds;
  int info_fd = -1;  // >= 0: `--info-fd N` (the sandbox init's host pid, see launch.cc)
  // Per entry of plan.mounts: for a bind, the descriptor of its source as bwrap will hold it
  // (`--bind-fd N` / `--ro-bind-fd N`: the directory opened and checked before bwrap started,
  // not a name a command could swap), kBindByPath to name the path, kBindSkipped for an
  // optional one that is gone. Empty: every bind by path.
  std::vector<int> bind_fds;
};

inline constexpr int kBindByPath = -1;
inline constexpr int kBindSkipped = -2;

// Fails (kUnavailable) for plans bwrap cannot express: no mount or user/PID namespace (the
// native backend's Landlock-only fallback), or Landlock/seccomp without a trampoline.
[[nodiscard]] Result<std::vector<std::string>> RenderBwrapArgv(const plan::LaunchPlan& plan,
                                                               const BwrapInvocation& how);

}  // namespace cordon::bwrap
