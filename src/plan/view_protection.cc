#include "plan/view_protection.h"

#include "core/paths.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// The mount that shows `path`: the last of the deepest mount points at or above it (a later
// mount at the same place covers an earlier one). Null when none does (an empty table).
const MountEntry* ShowingMount(const fs::path& path, const std::vector<MountEntry>& mounts) {
  const MountEntry* shown = nullptr;
  for (const MountEntry& m : mounts) {
    if (!core::IsWithin(path, m.mount_point)) continue;
    if (shown == nullptr || m.mount_point.native().size() >= shown->mount_point.native().size()) {
      shown = &m;
    }
  }
  return shown;
}

bool IsMountPoint(const fs::path& path, const std::vector<MountEntry>& mounts) {
  const MountEntry* shown = ShowingMount(path, mounts);
  return shown != nullptr && shown->mount_point == path;
}

bool OnReadOnlyMount(const fs::path& path, const std::vector<MountEntry>& mounts) {
  const MountEntry* shown = ShowingMount(path, mounts);
  return shown != nullptr && shown->read_only;
}

// A directory that cannot be renamed away by a command: a mount point, or on a read-only mount.
bool Pinned(const fs::path& dir, const std::vector<MountEntry>& mounts) {
  return IsMountPoint(dir, mounts) || OnReadOnlyMount(dir, mounts);
}

// The deepest of `writable` that holds `path`; empty when none does.
fs::path HoldingRoot(const fs::path& path, const std::vector<fs::path>& writable) {
  fs::path holder;
  for (const fs::path& root : writable) {
    if (core::IsWithin(path, root) && root.native().size() > holder.native().size()) holder = root;
  }
  return holder;
}

}  // namespace

bool HeldReadOnlyByView(const fs::path& entry, const std::vector<fs::path>& writable,
                        const std::vector<MountEntry>& mounts) {
  if (!OnReadOnlyMount(entry, mounts)) return false;
  for (const MountEntry& m : mounts) {
    if (core::IsWithin(m.mount_point, entry) && m.mount_point != entry && !m.read_only) {
      return false;
    }
  }
  const fs::path root = HoldingRoot(entry, writable);
  if (root.empty()) return true;  // in no writable root: nothing the command may change
  for (fs::path dir = entry.parent_path(); dir != root && core::IsWithin(dir, root);
       dir = dir.parent_path()) {
    if (!Pinned(dir, mounts)) return false;
  }
  // The root itself can be renamed only from a writable directory above it.
  const bool below_another =
      root.has_relative_path() && !HoldingRoot(root.parent_path(), writable).empty();
  return !below_another || Pinned(root, mounts);
}

std::optional<fs::path> FirstNotHeldByView(const std::vector<fs::path>& entries,
                                           const std::vector<fs::path>& writable,
                                           const std::vector<MountEntry>& mounts) {
  for (const fs::path& entry : entries) {
    if (!HeldReadOnlyByView(entry, writable, mounts)) return entry;
  }
  return std::nullopt;
}

}  // namespace cordon::plan
