#include "plan/hidden_paths.h"

#include <sys/stat.h>

#include <algorithm>

#include "core/paths.h"

namespace cordon::plan {
namespace {

void AddMask(std::vector<MountOp>& ops, const std::filesystem::path& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;
  std::filesystem::path target = path;
  if (S_ISLNK(st.st_mode)) {
    auto resolved = core::Canonical(path);
    if (!resolved || ::stat(resolved->c_str(), &st) != 0) return;
    target = *resolved;
  } else if (auto canonical = core::Canonical(path)) {
    target = *canonical;  // a parent may be a symlink (e.g. a home under /var/home)
  }
  MountOpKind kind = S_ISDIR(st.st_mode) ? MountOpKind::kMaskDirectory : MountOpKind::kMaskFile;
  bool duplicate =
      std::any_of(ops.begin(), ops.end(), [&](const MountOp& op) { return op.path == target; });
  if (!duplicate) ops.push_back({kind, target});
}

}  // namespace

std::vector<MountOp> BuildHiddenPathOps(const SandboxConfig& config,
                                        const std::filesystem::path& home) {
  std::vector<MountOp> ops;
  if (!home.empty() && home.is_absolute()) {
    for (std::string_view relative : kBuiltinHiddenPaths) AddMask(ops, home / relative);
  }
  for (const auto& path : config.hidden_paths) {
    if (path.is_absolute()) AddMask(ops, path);
  }
  return ops;
}

std::vector<MountOp> BuildRuntimeDirMasks(const std::vector<std::filesystem::path>& roots) {
  std::vector<MountOp> ops;
  for (const char* dir : {"/run", "/var/run"}) {
    auto canonical = core::Canonical(dir);
    if (!canonical) continue;
    const bool holds_root = std::any_of(roots.begin(), roots.end(), [&](const auto& root) {
      return core::IsWithin(root, *canonical);
    });
    if (!holds_root) AddMask(ops, *canonical);
  }
  return ops;
}

}  // namespace cordon::plan
