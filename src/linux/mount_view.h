// Child half of the mount view, run by the sandbox's init inside its new user and mount
// namespaces (after the id maps, so the mounts are owned by the mapped ids):
//
//   1. "/" becomes recursively private: nothing propagates to or from the host.
//   2. A staging tmpfs is mounted on /tmp and pivoted to, with the host's tree at /oldroot.
//   3. The host tree is bound recursively at /newroot and made read-only (and nosuid, nodev)
//      recursively with mount_setattr(AT_RECURSIVE) — every submount, not only the top one.
//   4. The plan's MountOps are replayed on /newroot: private tmpfs, writable binds taken from
//      /oldroot (still read-write), read-only binds, pins and masks on top of them. The last
//      three are resolved without following symlinks (openat2 RESOLVE_NO_SYMLINKS), checked
//      against the planned type and attached by descriptor (open_tree/fsmount + move_mount),
//      so a path swapped after planning fails the run instead of redirecting a mount.
//   5. A fresh /proc for the new PID namespace, with /proc/sys and friends read-only.
//   6. A minimal /dev: tmpfs with null, zero, full, random, urandom, tty bound from the host, a
//      new devpts instance, /dev/shm, the fd links; then the /dev tmpfs itself read-only.
//   7. /oldroot is detached, /newroot becomes "/" by pivot_root, the staging root is detached.
//
// After this the host's tree is unreachable except through what step 3-6 put into /newroot.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "linux/child_context.h"
#include "linux/error_pipe.h"

namespace cordon::linux_native {

// Kernel knobs under the fresh /proc that stay read-only (writes there act on the host: e.g.
// /proc/sys/kernel/core_pattern runs a program as host root). Relative to the new root.
inline constexpr std::array<const char*, 6> kProcReadOnlyPaths = {
    "/newroot/proc/sys", "/newroot/proc/sysrq-trigger", "/newroot/proc/irq", "/newroot/proc/bus",
    "/newroot/proc/fs",  "/newroot/proc/latency_stats"};

// Device nodes bound from the host into the minimal /dev.
inline constexpr std::array<const char*, 6> kDevNodes = {"null",   "zero",    "full",
                                                         "random", "urandom", "tty"};

// Ends with the new root as "/" and the working directory "/". Async-signal-safe.
StepResult BuildMountView(const ChildContext& c);

// Covers each placeholder of `covers` (linux/placeholder_cover.h) in the current mount
// namespace: the one-shot view (paths below kNewRoot), a joined command's copy of the session's
// view, a prepared command's through its relay. Allocation-free.
// Then writes `ignore_text` to `ignore_path` (its directories made), when both are given.
StepResult CoverPlaceholders(const std::vector<ChildCover>& covers, const char* ignore_path,
                             const char* ignore_text);

// Helpers shared with the zygote's per-command mounts (src/zygote). Async-signal-safe; both
// return 0 or -1 with errno set.
// mkdir -p of the first `len` bytes of `path` (mode 0755), on a stack copy (no allocation).
int MakeDirectories(const char* path, std::size_t len);
// mount_setattr(2) setting `attr_set` (sys::kMountAttr*) on `path`, and its submounts when
// `recursive`.
int SetMountAttr(const char* path, std::uint64_t attr_set, bool recursive);

}  // namespace cordon::linux_native
