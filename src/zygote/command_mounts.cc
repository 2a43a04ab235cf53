#include "zygote/command_mounts.h"

#include <algorithm>

#include "core/paths.h"

namespace cordon::zygote {
namespace {

using plan::MountOpKind;

bool IsBind(MountOpKind kind) {
  return kind == MountOpKind::kBindWritable || kind == MountOpKind::kBindReadOnly;
}

bool IsMask(MountOpKind kind) {
  return kind == MountOpKind::kMaskDirectory || kind == MountOpKind::kMaskFile;
}

// Strictly beneath: a mount on the tmpfs's own path would replace it, not sit on it.
bool Beneath(const std::filesystem::path& path, const std::filesystem::path& root) {
  return path != root && core::IsWithin(path, root);
}

}  // namespace

std::optional<std::vector<CommandMount>> PlanCommandMounts(
    const std::vector<plan::MountOp>& mounts) {
  std::vector<CommandMount> steps;
  int slots = 0;
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    if (mounts[i].kind != MountOpKind::kTmpfs) continue;
    const std::filesystem::path& tmpfs = mounts[i].path;
    // Anything mounted earlier at or above it, or beneath it, would be lost or misplaced. An
    // empty view above it (the scratch inside a /tmp that holds a root) is neither: the fresh
    // tmpfs goes on its mount point there, which the view keeps.
    for (std::size_t j = 0; j < i; ++j) {
      if (mounts[j].kind == MountOpKind::kDirectory) continue;
      if (mounts[j].kind == MountOpKind::kHomeView && Beneath(tmpfs, mounts[j].path)) continue;
      if (core::IsWithin(tmpfs, mounts[j].path) || core::IsWithin(mounts[j].path, tmpfs)) {
        return std::nullopt;
      }
    }
    // The trees mounted beneath it later: the outermost binds; nested binds and masks ride
    // along in their recursive clone.
    std::vector<std::filesystem::path> tops;
    std::vector<CommandMount> replay;
    for (std::size_t j = i + 1; j < mounts.size(); ++j) {
      const plan::MountOp& op = mounts[j];
      // A bind at the tmpfs's own path (a workspace that is the host's /var/tmp) covers it:
      // cloned and re-attached like one beneath, so the fresh tmpfs never hides it.
      const bool covers = IsBind(op.kind) && op.path == tmpfs;
      if (!covers && !Beneath(op.path, tmpfs)) continue;
      if (core::IsWithinAny(op.path, tops)) continue;
      if (op.kind == MountOpKind::kTmpfs || IsMask(op.kind)) return std::nullopt;
      if (op.kind == MountOpKind::kDirectory) {
        replay.push_back({CommandMountKind::kDirectory, op.path.string(), -1, false});
        continue;
      }
      if (IsBind(op.kind)) {
        if (slots == kMaxClonedTrees) return std::nullopt;
        tops.push_back(op.path);
        steps.push_back({CommandMountKind::kCloneTree, op.path.string(), slots, op.optional});
        replay.push_back({CommandMountKind::kAttach, op.path.string(), slots, op.optional});
        ++slots;
      }
    }
    steps.push_back({CommandMountKind::kTmpfs, tmpfs.string(), -1, false});
    steps.insert(steps.end(), replay.begin(), replay.end());
  }
  return steps;
}

}  // namespace cordon::zygote
