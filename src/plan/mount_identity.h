// The identity of what each bind and mask of a plan is made from or over, so that a sandbox
// built from an earlier plan is known to cover the same files as a new one (plan/shape.h). The
// kernel detaches every mount on a file that the host renames over or unlinks, in every mount
// namespace: a prepared view keeps the path but loses the mask.
#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

#include "plan/launch_plan.h"

namespace cordon::plan {

// Binds and masks carry an identity; tmpfs mounts and directories are made fresh each time.
bool HasIdentity(MountOpKind kind);

struct Identified {
  mode_t mode = 0;
  FileId id;
};

// statx of `path` (relative to `dirfd`) without following a symlink at its last component:
// its type and its identity. For a mask's target (`mask`) the FileId also holds the birth time
// where the file system keeps one, else the change time; a bind source or a pinned directory
// is known by device and inode alone (its change time moves with every entry made in it, and
// overlayfs gives a directory a new birth time when it copies it up).
// nullopt with errno when it cannot be looked at.
std::optional<Identified> IdentifyAt(int dirfd, const char* path, bool mask);

// Fills the identity of every bind and mask in `ops` that the code which planned it did not
// already know (a path the planner made canonical; a missing optional target stays unknown).
void IdentifyMounts(std::vector<MountOp>& ops);

}  // namespace cordon::plan
