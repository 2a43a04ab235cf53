// cordon inside a sandbox that already keeps the protected entries read-only (decision 0006,
// revisited in 0044). Without a mount namespace of its own the inner cordon cannot keep `.git`
// or a host-run file read-only inside a writable root (Landlock grants a directory's rights to
// everything beneath it); but its own view may already do so — the outer cordon bound each of
// them read-only and pinned the directories on the way. A read-only mount cannot be made
// writable, and a mount point cannot be removed, renamed or replaced, by a process without
// CAP_SYS_ADMIN over the mount namespace, which no command holds. So the mount table of the
// inner cordon's own process (/proc/self/mountinfo, read by cordon, never from a command's
// output) decides, entry by entry.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "plan/home_aliases.h"

namespace cordon::plan {

// Whether the view keeps `entry` (absent or present) from being written, created, removed,
// renamed away or replaced, for a command that may write beneath `writable` (the roots, one of
// which holds `entry`):
//   - the mount that shows `entry` (the last of the deepest mount points at or above it) is
//     read-only, and so is every mount below `entry`;
//   - every directory between the writable root that holds `entry` and `entry` is a mount
//     point or on a read-only mount (none can be renamed away and made again);
//   - that root too, when it lies in another writable root.
// `mounts`: the process's mount table (ReadMountTable).
bool HeldReadOnlyByView(const std::filesystem::path& entry,
                        const std::vector<std::filesystem::path>& writable,
                        const std::vector<MountEntry>& mounts);

// The first of `entries` the view does not hold (HeldReadOnlyByView); nullopt when it holds all.
std::optional<std::filesystem::path> FirstNotHeldByView(
    const std::vector<std::filesystem::path>& entries,
    const std::vector<std::filesystem::path>& writable, const std::vector<MountEntry>& mounts);

}  // namespace cordon::plan
