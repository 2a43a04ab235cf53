// The mounts of a process's mount namespace, by key (linux/mount_id_scanner.h: a hash of each
// line's mount ID, parent and device — an ID alone may be reused). A mask whose
// file the host renames over or unlinks is detached from every namespace by the kernel
// (detach_mounts): a view built earlier then lacks one of the mounts it was built with, and a
// command must not start in it (docs/decisions/0033-one-sandbox-shape-and-identity.md). Mounts that
// appear (propagated from the host: a container started, a disk mounted) take nothing away and do
// not count.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace cordon::zygote {

// Sorted mount keys, read through `proc` (an O_PATH descriptor of /proc); nullopt when they
// cannot be read.
std::optional<std::vector<std::uint64_t>> MountIds(int proc, pid_t pid);

// Every mount of `built` is still in `now` (both sorted).
bool StillMounted(const std::vector<std::uint64_t>& built, const std::vector<std::uint64_t>& now);

}  // namespace cordon::zygote
