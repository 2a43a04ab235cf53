#include "worktree/detect.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "core/paths.h"
#include "core/unique_fd.h"

namespace cordon::worktree {
namespace {

namespace fs = std::filesystem;

// git's own pointer files are one short line; anything larger is not one of them.
constexpr std::size_t kMaxPointerFile = 4096;

// Reads a small regular file without following a symlink at its last component.
Result<std::string> ReadPointerFile(const fs::path& path) {
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("open({}): {}", path.string(), std::strerror(errno)), errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} is not a regular file", path.string()));
  }
  std::string data(kMaxPointerFile + 1, '\0');
  std::size_t used = 0;
  while (used < data.size()) {
    const ssize_t n = ::read(fd.get(), data.data() + used, data.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Fail(ErrorCode::kSystem,
                  fmt::format("read({}): {}", path.string(), std::strerror(errno)), errno);
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  if (used > kMaxPointerFile) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} is larger than {} bytes: not a git pointer file", path.string(),
                            kMaxPointerFile));
  }
  data.resize(used);
  while (!data.empty() && (data.back() == '\n' || data.back() == '\r' || data.back() == ' ')) {
    data.pop_back();
  }
  if (data.empty() || data.find('\n') != std::string::npos ||
      data.find('\0') != std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} is not a one-line git pointer file", path.string()));
  }
  return data;
}

// A pointer's path, relative ones taken from `base` (git writes relative paths with
// worktree.useRelativePaths), canonicalised.
Result<fs::path> ResolvePointer(const fs::path& base, const std::string& text,
                                const fs::path& pointer_file) {
  fs::path target(text);
  if (target.is_relative()) target = base / target;
  auto canonical = core::Canonical(target);
  if (!canonical) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("{} names {}, which does not exist", pointer_file.string(), text));
  }
  return *canonical;
}

Error NotLinked(const fs::path& root, std::string why) {
  return Error{ErrorCode::kInvalidArgument, 0,
               fmt::format("{} is not a usable linked git worktree: {}", root.string(), why)};
}

}  // namespace

Result<LinkedWorktree> DetectLinkedWorktree(const fs::path& start) {
  auto canonical_start = core::Canonical(start);
  if (!canonical_start) {
    return Fail(ErrorCode::kNotFound, fmt::format("worktree mode: {}: {}", start.string(),
                                                  canonical_start.error().message));
  }
  // Like git: the nearest directory (this one or an ancestor) holding a .git entry. A .git
  // directory without HEAD is not a repository to git, which goes on to the parent: so do we
  // (cordon's own placeholder for a missing .git is such an empty directory).
  fs::path root = *canonical_start;
  struct stat st {};
  auto holds_git = [&st](const fs::path& dir) {
    if (::lstat((dir / ".git").c_str(), &st) != 0) return false;
    struct stat head {};
    return !S_ISDIR(st.st_mode) || ::lstat((dir / ".git" / "HEAD").c_str(), &head) == 0;
  };
  while (!holds_git(root)) {
    if (root == root.root_path()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("worktree mode: {} is not a git repository (no .git in it or any "
                              "parent directory)",
                              canonical_start->string()));
    }
    root = root.parent_path();
  }
  LinkedWorktree found;
  found.root = root;
  found.git_file = root / ".git";
  if (S_ISDIR(st.st_mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("worktree mode: {} is a main working tree, not a linked worktree: "
                            "create one with `git -C {} worktree add <path> [<branch>]` and run "
                            "cordon there",
                            root.string(), root.string()));
  }
  if (!S_ISREG(st.st_mode)) {
    return std::unexpected(NotLinked(root, ".git is neither a file nor a directory (a symlink?)"));
  }

  auto pointer = ReadPointerFile(found.git_file);
  if (!pointer) return std::unexpected(NotLinked(root, pointer.error().message));
  constexpr std::string_view kPrefix = "gitdir: ";
  if (!pointer->starts_with(kPrefix)) {
    return std::unexpected(NotLinked(root, ".git does not start with 'gitdir: '"));
  }
  auto git_dir = ResolvePointer(root, pointer->substr(kPrefix.size()), found.git_file);
  if (!git_dir) return std::unexpected(NotLinked(root, git_dir.error().message));
  found.git_dir = *git_dir;
  const fs::path worktrees = found.git_dir.parent_path();
  if (worktrees.filename() != "worktrees") {
    return std::unexpected(
        NotLinked(root, fmt::format("its git dir {} does not lie in a 'worktrees' directory "
                                    "(a submodule or a separate git dir?)",
                                    found.git_dir.string())));
  }

  // commondir must lead back to the git dir that holds worktrees/<name>.
  const fs::path commondir_file = found.git_dir / "commondir";
  auto common_text = ReadPointerFile(commondir_file);
  if (!common_text) return std::unexpected(NotLinked(root, common_text.error().message));
  auto common = ResolvePointer(found.git_dir, *common_text, commondir_file);
  if (!common) return std::unexpected(NotLinked(root, common.error().message));
  if (*common != worktrees.parent_path()) {
    return std::unexpected(
        NotLinked(root, fmt::format("{} leads to {}, not to {}", commondir_file.string(),
                                    common->string(), worktrees.parent_path().string())));
  }
  found.common_dir = *common;
  struct stat head {};
  struct stat objects {};
  if (::lstat((found.common_dir / "HEAD").c_str(), &head) != 0 || !S_ISREG(head.st_mode) ||
      ::stat((found.common_dir / "objects").c_str(), &objects) != 0 || !S_ISDIR(objects.st_mode)) {
    return std::unexpected(NotLinked(
        root,
        fmt::format("{} is not a git directory (no HEAD or objects)", found.common_dir.string())));
  }

  // And the git dir's back pointer must name this worktree's .git file, not another's.
  const fs::path back_file = found.git_dir / "gitdir";
  auto back_text = ReadPointerFile(back_file);
  if (!back_text) return std::unexpected(NotLinked(root, back_text.error().message));
  auto back = ResolvePointer(found.git_dir, *back_text, back_file);
  if (!back) return std::unexpected(NotLinked(root, back.error().message));
  if (*back != found.git_file) {
    return std::unexpected(NotLinked(
        root, fmt::format("{} names {}, not this worktree's {} (moved? run `git worktree repair`)",
                          back_file.string(), back->string(), found.git_file.string())));
  }
  return found;
}

}  // namespace cordon::worktree
