// Covering a placeholder inside a sandbox's mount namespace (docs/decisions/0034). A host-run
// file that does not exist when a command starts is kept from being created by a placeholder
// the supervisor makes on the host for that command alone: an empty directory for a directory
// entry, a dangling symbolic link (kPlaceholderLinkTarget) for a file entry, which every tool
// that follows links reads as absent. Inside the sandbox the placeholder is bound onto itself,
// read-only (a link can be: open_tree and move_mount take its own inode when told not to follow
// it). The command sees what the host sees, and can neither write it nor remove, rename or
// replace the name (a mount point is busy); creating through the link fails, since nothing can
// be created where it points.
//
// Raw system calls only, no allocation: the one-shot child, the zygote's command init and the
// prepared command's relay call it between clone and exec.
#pragma once

#include "plan/launch_plan.h"

namespace cordon::linux_native {

using plan::kPlaceholderLinkTarget;

// Covers the placeholder at `path` (absolute, resolved from `/` without following any symbolic
// link, the last component included): `directory` expects a directory, otherwise a link to
// kPlaceholderLinkTarget; either is bound onto itself read-only. 0, or -1 with errno: ELOOP
// when a component on the way is a link, ENOTDIR / EISDIR / EMLINK when the placeholder is of
// the other kind or was replaced (a link pointing elsewhere is EMLINK too), anything the mount
// calls return.
int CoverPlaceholder(const char* path, bool directory);

// Pins the directory at `path` (resolved as above): its tree, with what is mounted in it, bound
// onto itself, writable, so that it cannot be renamed or removed. 0, or -1 with errno (ENOTDIR
// when it is not a directory; ENOENT when it is gone: a parent that vanished pins nothing and
// its placeholder's cover fails instead).
int PinDirectoryAt(const char* path);

}  // namespace cordon::linux_native
