#include "plan/git_placeholder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/syscall_error.h"

namespace cordon::plan {

Result<GitPlaceholders> GitPlaceholders::Create(
    const std::vector<std::filesystem::path>& writable_roots) {
  GitPlaceholders result;
  for (const std::filesystem::path& root : writable_roots) {
    const std::string git = (root / ".git").string();
#if defined(__linux__)
    core::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#else
    core::UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#endif
    if (!root_fd) return core::FailSyscall("open", root.string());
    struct stat st {};
    if (::fstatat(root_fd.get(), ".git", &st, AT_SYMLINK_NOFOLLOW) == 0) {
      // Something is there. An empty directory may be a placeholder left by a killed run (or by
      // a concurrent one): hold it too, so it is removed once nobody needs it.
      if (!S_ISDIR(st.st_mode)) continue;
    } else if (errno != ENOENT) {
      return core::FailSyscall("fstatat", git);
    } else if (::mkdirat(root_fd.get(), ".git", 0755) != 0 && errno != EEXIST) {
      // What cordon cannot create here, the command (never more privileged) cannot either.
      if (errno == EACCES || errno == EPERM || errno == EROFS) continue;
      return core::FailSyscall("mkdirat", fmt::format("{} (placeholder keeping .git from being "
                                                      "created in the sandbox)",
                                                      git));
    }
    core::UniqueFd dir(
        ::openat(root_fd.get(), ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return core::FailSyscall("openat", git);
    // Shared: concurrent runs on the same workspace each hold it; the last one removes it.
    if (::flock(dir.get(), LOCK_SH) != 0) return core::FailSyscall("flock(LOCK_SH)", git);
    result.paths_.emplace_back(git);
    result.held_.push_back({std::move(root_fd), std::move(dir)});
  }
  return result;
}

GitPlaceholders& GitPlaceholders::operator=(GitPlaceholders&& other) noexcept {
  if (this != &other) {
    Release();
    held_ = std::move(other.held_);
    paths_ = std::move(other.paths_);
    other.held_.clear();
    other.paths_.clear();
  }
  return *this;
}

void GitPlaceholders::Release() {
  for (Held& h : held_) {
    // Only when no other run holds it, and only if still empty (rmdir refuses otherwise): a
    // `git init` on the host during the run keeps its repository.
    if (::flock(h.dir.get(), LOCK_EX | LOCK_NB) == 0) {
      (void)::unlinkat(h.root.get(), ".git", AT_REMOVEDIR);
    }
  }
  held_.clear();
  paths_.clear();
}

}  // namespace cordon::plan
