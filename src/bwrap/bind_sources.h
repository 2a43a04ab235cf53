// The bind sources of a plan, opened before bwrap starts (docs/decisions/0033): each without
// following a symbolic link (linux/open_no_symlinks.h: every planned path is canonical, so a
// link in one was swapped in since) and, where the plan names the directory's identity
// (MountOp::id), checked against it. bwrap then binds these descriptors (--bind-fd,
// --ro-bind-fd), never what a name reaches when bwrap looks it up: the same guarantee as the
// native backend's binds from descriptors.
#pragma once

#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "plan/launch_plan.h"

namespace cordon::bwrap {

struct BindSources {
  std::vector<core::UniqueFd> fds;  // what bwrap receives, from `first_fd` on, in this order
  std::vector<int> numbers;         // per plan.mounts: BwrapInvocation::bind_fds (argv.h)
};

// ELOOP (a link on the way), ESTALE (another file than the plan's), or the open's error for a
// required bind; an optional one (a pin of a hidden path's ancestor) that is gone is skipped.
[[nodiscard]] Result<BindSources> OpenBindSources(const plan::LaunchPlan& plan, int first_fd);

}  // namespace cordon::bwrap
