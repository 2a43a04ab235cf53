#include "plan/mount_ops.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

#include "core/paths.h"

namespace cordon::plan {
namespace {

// <gitdir>/commondir holds a path (usually "../..") to the main repository's git directory.
std::optional<std::filesystem::path> ReadCommonDir(const std::filesystem::path& gitdir) {
  std::ifstream in(gitdir / "commondir");
  std::string line;
  if (!std::getline(in, line) || line.empty()) return std::nullopt;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  auto canonical = core::Canonical(gitdir / line);
  if (!canonical) return std::nullopt;
  return *canonical;
}

// "gitdir: <path>" from a .git file (worktrees, submodules), resolved against `root`.
std::optional<std::filesystem::path> ReadGitdirFile(const std::filesystem::path& git_file,
                                                    const std::filesystem::path& root) {
  std::ifstream in(git_file);
  std::string line;
  if (!std::getline(in, line) || !line.starts_with("gitdir:")) return std::nullopt;
  std::string target = line.substr(7);
  target.erase(0, target.find_first_not_of(" \t"));
  while (!target.empty() && (target.back() == '\r' || target.back() == ' ')) target.pop_back();
  if (target.empty()) return std::nullopt;
  auto canonical = core::Canonical(root / target);  // an absolute target replaces `root`
  if (!canonical) return std::nullopt;
  return *canonical;
}

}  // namespace

std::vector<std::filesystem::path> GitMetadataPaths(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> paths;
  const std::filesystem::path git = root / ".git";
  struct stat st;
  if (::lstat(git.c_str(), &st) != 0) return paths;
  if (S_ISDIR(st.st_mode)) {
    paths.push_back(git);
  } else if (S_ISREG(st.st_mode)) {
    paths.push_back(git);  // the pointer itself: rewriting it would redirect git
    if (auto gitdir = ReadGitdirFile(git, root)) {
      paths.push_back(*gitdir);
      // A worktree's git dir names the repository's common dir (objects, refs, config).
      if (auto common = ReadCommonDir(*gitdir)) paths.push_back(*common);
    }
  }
  return paths;
}

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
  // .git is made read-only again on top of its writable root.
  // Every root the user named counts, including those dropped as nested in another writable
  // root (a workspace inside a configured root keeps its own .git protected).
  if (config.protect_git_metadata) {
    std::vector<std::filesystem::path> candidates = writable_roots;
    if (config.mode == SandboxMode::kWorkspaceWrite) {
      candidates.push_back(workspace);
      for (const auto& configured : config.writable_roots) {
        if (auto canonical = core::Canonical(configured)) candidates.push_back(*canonical);
      }
    }
    for (const auto& root : candidates) {
      for (const auto& path : GitMetadataPaths(root)) {
        bool writable = std::any_of(writable_roots.begin(), writable_roots.end(),
                                    [&](const auto& r) { return core::IsWithin(path, r); });
        bool seen = std::any_of(ops.begin(), ops.end(), [&](const MountOp& op) {
          return op.kind == MountOpKind::kBindReadOnly && op.path == path;
        });
        if (writable && !seen) ops.push_back({MountOpKind::kBindReadOnly, path});
      }
    }
  }
  return ops;
}

}  // namespace cordon::plan
