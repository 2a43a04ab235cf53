#include "plan/mount_ops.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/paths.h"

namespace cordon::plan {
namespace {

bool IsDirectoryNoFollow(const std::filesystem::path& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

Result<std::vector<std::filesystem::path>> WritableRoots(const SandboxConfig& config,
                                                         const std::filesystem::path& workspace) {
  std::vector<std::filesystem::path> roots;
  if (config.mode != SandboxMode::kWorkspaceWrite) return roots;
  roots.push_back(workspace);
  for (const std::filesystem::path& configured : config.writable_roots) {
    auto canonical = core::Canonical(configured);
    if (!canonical) {
      Error error = std::move(canonical).error();
      error.message = fmt::format("writable root {}: {}", configured.string(), error.message);
      return std::unexpected(std::move(error));
    }
    roots.push_back(*std::move(canonical));
  }
  // Outer roots first, so that nested ones can be recognised and dropped.
  std::sort(roots.begin(), roots.end());
  std::vector<std::filesystem::path> kept;
  for (auto& root : roots) {
    bool covered = std::any_of(kept.begin(), kept.end(), [&](const std::filesystem::path& k) {
      return core::IsWithin(root, k);
    });
    if (!covered) kept.push_back(std::move(root));
  }
  return kept;
}

std::vector<MountOp> BuildMountOps(const SandboxConfig& config,
                                   const std::filesystem::path& workspace,
                                   const std::vector<std::filesystem::path>& writable_roots) {
  std::vector<MountOp> ops;
  // Private scratch space first: a writable root below /tmp is bound on top of it later.
  ops.push_back({MountOpKind::kTmpfs, kPrivateTmp});
  ops.push_back({MountOpKind::kDirectory, kPrivateHome});
  if (auto var_tmp = core::Canonical("/var/tmp"); var_tmp && *var_tmp != kPrivateTmp) {
    ops.push_back({MountOpKind::kTmpfs, *var_tmp});
  }
  for (const auto& root : writable_roots) ops.push_back({MountOpKind::kBindWritable, root});
  if (config.mode == SandboxMode::kReadOnly) ops.push_back({MountOpKind::kBindReadOnly, workspace});
  // .git is made read-only again on top of its writable root. Only a real directory: a .git
  // symlink or file (worktree, submodule) is left to the hidden/protected-path work of issue 4.
  if (config.protect_git_metadata) {
    for (const auto& root : writable_roots) {
      std::filesystem::path git = root / ".git";
      if (IsDirectoryNoFollow(git)) ops.push_back({MountOpKind::kBindReadOnly, git});
    }
  }
  return ops;
}

}  // namespace cordon::plan
