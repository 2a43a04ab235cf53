#include "plan/mount_ops.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>

#include "core/paths.h"
#include "core/unique_fd.h"
#include "plan/host_run_paths.h"

namespace cordon::plan {
namespace {

// git's pointer files (.git, commondir) are one short line; anything larger is not one.
constexpr std::size_t kMaxPointerFile = 4096;

// The first line of a small regular file, read without following a symlink at its last
// component and without blocking (a FIFO planted as .git must not hang the planner, nor
// /dev/zero exhaust its memory). nullopt for anything else.
std::optional<std::string> ReadPointerLine(const std::filesystem::path& path) {
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string data(kMaxPointerFile + 1, '\0');
  std::size_t used = 0;
  while (used < data.size()) {
    const ssize_t n = ::read(fd.get(), data.data() + used, data.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  if (used > kMaxPointerFile) return std::nullopt;
  data.resize(used);
  data.resize(std::min(data.find('\n'), data.size()));
  if (data.find('\0') != std::string::npos) return std::nullopt;
  return data;
}

// <gitdir>/commondir holds a path (usually "../..") to the main repository's git directory.
std::optional<std::filesystem::path> ReadCommonDir(const std::filesystem::path& gitdir) {
  std::optional<std::string> read = ReadPointerLine(gitdir / "commondir");
  if (!read || read->empty()) return std::nullopt;
  std::string line = *std::move(read);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  auto canonical = core::Canonical(gitdir / line);
  if (!canonical) return std::nullopt;
  return *canonical;
}

// "gitdir: <path>" from a .git file (worktrees, submodules), resolved against `root`.
std::optional<std::filesystem::path> ReadGitdirFile(const std::filesystem::path& git_file,
                                                    const std::filesystem::path& root) {
  std::optional<std::string> line = ReadPointerLine(git_file);
  if (!line || !line->starts_with("gitdir:")) return std::nullopt;
  std::string target = line->substr(7);
  target.erase(0, target.find_first_not_of(" \t"));
  while (!target.empty() && (target.back() == '\r' || target.back() == ' ')) target.pop_back();
  if (target.empty()) return std::nullopt;
  auto canonical = core::Canonical(root / target);  // an absolute target replaces `root`
  if (!canonical) return std::nullopt;
  return *canonical;
}

// What git accepts as a git directory names a HEAD (git's is_git_directory checks more); a
// target without one is never used, so no hook of it runs.
bool HasHead(const std::filesystem::path& gitdir) {
  struct stat st {};
  return ::lstat((gitdir / "HEAD").c_str(), &st) == 0;
}

}  // namespace

std::vector<std::filesystem::path> GitMetadataPaths(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> paths;
  const std::filesystem::path git = root / ".git";
  struct stat st;
  // A placeholder another run holds is no repository: this run holds its own (planner.cc).
  if (::lstat(git.c_str(), &st) != 0 || IsPlaceholder(git)) return paths;
  if (S_ISDIR(st.st_mode)) {
    paths.push_back(git);
  } else if (S_ISREG(st.st_mode)) {
    paths.push_back(git);  // the pointer itself: rewriting it would redirect git
    if (auto gitdir = ReadGitdirFile(git, root); gitdir && HasHead(*gitdir)) {
      paths.push_back(*gitdir);
      // A worktree's git dir names the repository's common dir (objects, refs, config).
      if (auto common = ReadCommonDir(*gitdir); common && HasHead(*common)) {
        paths.push_back(*common);
      }
    }
  }
  return paths;
}

std::string GitDirProblem(const std::filesystem::path& root) {
  const std::vector<std::filesystem::path> paths = GitMetadataPaths(root);
  for (std::size_t i = 1; i < paths.size(); ++i) {
    if (!core::IsWithin(root, paths[i])) continue;
    return fmt::format(
        "cannot keep the git metadata of {0} read-only: {0}/.git names {1} as its git "
        "directory, which contains {0} itself. Read-only, it would make the whole project "
        "read-only; writable, a command could plant hooks that git runs on the host. Correct "
        "the \"gitdir:\" line of {0}/.git (and the commondir file it leads to), or remove the "
        "file",
        root.string(), paths[i].string());
  }
  return {};
}

std::string WritableRootInGitProblem(const std::filesystem::path& root,
                                     const std::vector<std::filesystem::path>& writable_roots) {
  for (const std::filesystem::path& git : GitMetadataPaths(root)) {
    for (const std::filesystem::path& writable : writable_roots) {
      if (!core::IsWithin(writable, git)) continue;
      return fmt::format(
          "writable root {0} lies in the git metadata of {1} ({2}), which protect_git_metadata "
          "keeps read-only: writable, a command could plant hooks that git runs on the host "
          "(fix: remove {0} from writable_roots, and commit from the host with cordon git "
          "commit; or set sandbox.protect_git_metadata to false)",
          writable.string(), root.string(), git.string());
    }
  }
  return {};
}

std::string GitLinkProblem(const std::filesystem::path& git) {
  return fmt::format(
      "cannot keep {0} read-only: it is a symbolic link, which git follows and the command "
      "could replace (protect_git_metadata keeps each repository's .git read-only). Replace "
      "the link with a file that names the directory, which git reads the same way and cordon "
      "protects: t=$(readlink -f {0}) && rm {0} && printf 'gitdir: %s\\n' \"$t\" > {0}; or "
      "set sandbox.protect_git_metadata to false",
      git.string());
}

Result<std::vector<std::filesystem::path>> WritableRoots(const SandboxConfig& config,
                                                         const std::filesystem::path& workspace,
                                                         bool pinned) {
  std::vector<std::filesystem::path> roots;
  if (config.mode != SandboxMode::kWorkspaceWrite) return roots;
  roots.push_back(workspace);
  for (const std::filesystem::path& configured : config.writable_roots) {
    if (pinned) {
      roots.push_back(configured);
      continue;
    }
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
    if (!core::IsWithinAny(root, kept)) kept.push_back(std::move(root));
  }
  return kept;
}

std::vector<std::filesystem::path> ProtectedRoots(
    const SandboxConfig& config, const std::filesystem::path& workspace,
    const std::vector<std::filesystem::path>& writable_roots) {
  std::vector<std::filesystem::path> roots = writable_roots;
  if (config.mode != SandboxMode::kWorkspaceWrite) return roots;
  auto add = [&](const std::filesystem::path& root) {
    if (std::find(roots.begin(), roots.end(), root) == roots.end()) roots.push_back(root);
  };
  add(workspace);
  for (const auto& configured : config.writable_roots) {
    if (auto canonical = core::Canonical(configured)) add(*canonical);
  }
  return roots;
}

std::vector<std::filesystem::path> ProtectionPins(
    const std::vector<std::filesystem::path>& writable_roots,
    const std::vector<std::filesystem::path>& directories,
    const std::vector<std::filesystem::path>& protected_paths) {
  std::vector<std::filesystem::path> pins;
  // `from` and each directory above it, up to (not including) the writable root it lies in.
  auto up = [&](const std::filesystem::path& from) {
    for (const std::filesystem::path& root : writable_roots) {
      if (from == root || !core::IsWithin(from, root)) continue;
      for (std::filesystem::path at = from; at != root && core::IsWithin(at, root);
           at = at.parent_path()) {
        pins.push_back(at);
      }
    }
  };
  for (const std::filesystem::path& directory : directories) up(directory);
  for (const std::filesystem::path& path : protected_paths) up(path.parent_path());
  // Outermost first (a pin binds what is below it), each once.
  std::sort(pins.begin(), pins.end());
  pins.erase(std::unique(pins.begin(), pins.end()), pins.end());
  return pins;
}

std::vector<MountOp> PrivateAreaOps(const std::vector<std::filesystem::path>& held, bool views) {
  auto holds = [&](const std::filesystem::path& area) {
    return views && std::any_of(held.begin(), held.end(), [&](const std::filesystem::path& p) {
             return p != area && core::IsWithin(p, area);
           });
  };
  std::vector<MountOp> ops;
  // A root at the area's own path is bound over it later, and its writes reach the host.
  if (holds(kPrivateTmp)) {
    ops.push_back({MountOpKind::kHomeView, kPrivateTmp});
    ops.push_back({MountOpKind::kTmpfs, kViewScratch});
    ops.push_back({MountOpKind::kDirectory, kViewScratchHome});
  } else {
    ops.push_back({MountOpKind::kTmpfs, kPrivateTmp});
    ops.push_back({MountOpKind::kDirectory, kPrivateHome});
  }
  if (auto var_tmp = core::Canonical("/var/tmp"); var_tmp && *var_tmp != kPrivateTmp) {
    ops.push_back({holds(*var_tmp) ? MountOpKind::kHomeView : MountOpKind::kTmpfs, *var_tmp});
  }
  return ops;
}

Scratch ScratchOf(const std::vector<MountOp>& mounts) {
  const bool view = std::any_of(mounts.begin(), mounts.end(), [](const MountOp& op) {
    return op.kind == MountOpKind::kTmpfs && op.path == kViewScratch;
  });
  if (view) return {kViewScratch, kViewScratchHome};
  return {kPrivateTmp, kPrivateHome};
}

std::vector<MountOp> BuildMountOps(const SandboxConfig& config,
                                   const std::filesystem::path& workspace,
                                   const std::vector<std::filesystem::path>& writable_roots,
                                   const std::vector<std::filesystem::path>& host_run_files,
                                   const std::vector<std::filesystem::path>& nested_projects,
                                   bool views) {
  // Private scratch space first: the roots below /tmp are bound on top of it later.
  std::vector<std::filesystem::path> held = writable_roots;
  if (config.mode == SandboxMode::kReadOnly) held.push_back(workspace);
  std::vector<MountOp> ops = PrivateAreaOps(held, views);
  for (const auto& root : writable_roots) ops.push_back({MountOpKind::kBindWritable, root});
  // .git and the host-run files are made read-only again on top of their writable root. Every
  // root the user named counts, including those dropped as nested in another writable root (a
  // workspace inside a configured root keeps its own .git protected).
  std::vector<std::filesystem::path> read_only;
  std::vector<std::filesystem::path> git;
  auto protect = [&](const std::filesystem::path& path) {
    bool writable = core::IsWithinAny(path, writable_roots);
    bool seen = std::find(read_only.begin(), read_only.end(), path) != read_only.end();
    if (writable && !seen) read_only.push_back(path);
  };
  if (config.protect_git_metadata) {
    for (const auto& root : ProtectedRoots(config, workspace, writable_roots)) {
      for (const auto& path : GitMetadataPaths(root)) git.push_back(path);
    }
    for (const auto& project : nested_projects) {
      for (const auto& path : GitMetadataPaths(project)) git.push_back(path);
    }
    for (const auto& path : git) protect(path);
  }
  for (const auto& path : host_run_files) protect(path);
  // Pinned (bound onto themselves: a mount point cannot be renamed or removed): each nested
  // project and the directories above it, so that no command moves a project beyond a later
  // search's reach; and every directory between a writable root and a protected path, so that
  // none is renamed away and made again with an entry of the command's. (A placeholder's
  // parents are the command's own: pinned with its covers, PlaceholderCovers.)
  for (const std::filesystem::path& pin :
       ProtectionPins(writable_roots, nested_projects, read_only)) {
    ops.push_back({MountOpKind::kBindWritable, pin, /*optional=*/true});
  }
  if (config.mode == SandboxMode::kReadOnly) ops.push_back({MountOpKind::kBindReadOnly, workspace});
  for (const auto& path : read_only) {
    MountOp op{MountOpKind::kBindReadOnly, path};
    op.git_metadata = std::find(git.begin(), git.end(), path) != git.end();
    ops.push_back(std::move(op));
  }
  return ops;
}

void OrderPinsBeforeReadOnlyBinds(std::vector<MountOp>& ops) {
  std::vector<std::filesystem::path> areas;
  std::vector<std::filesystem::path> writable;
  for (const MountOp& op : ops) {
    if (op.kind == MountOpKind::kHomeView) areas.push_back(op.path);
    if (op.kind == MountOpKind::kBindWritable && !op.optional) writable.push_back(op.path);
  }
  auto rank = [&](const MountOp& op) {
    switch (op.kind) {
      case MountOpKind::kTmpfs:
      case MountOpKind::kDirectory:
      case MountOpKind::kHomeView:
        return 0;
      case MountOpKind::kBindWritable:
        return op.optional ? 2 : 1;
      case MountOpKind::kBindReadOnly:
        return core::IsWithinAny(op.path, areas) && !core::IsWithinAny(op.path, writable) ? 0 : 3;
      case MountOpKind::kMaskDirectory:
      case MountOpKind::kMaskFile:
      case MountOpKind::kResolverConfig:  // possibly inside a private tmpfs: after it
        return 4;
    }
    return 4;
  };
  std::stable_sort(ops.begin(), ops.end(),
                   [&](const MountOp& a, const MountOp& b) { return rank(a) < rank(b); });
}

}  // namespace cordon::plan
