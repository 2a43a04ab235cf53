#include "plan/git_placeholder.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>

#include "core/syscall_error.h"

namespace cordon::plan {

namespace {

// LOCK_SH on `fd`, waiting at most about a second for an exclusive holder; false with errno.
bool LockShared(int fd) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (::flock(fd, LOCK_SH | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK && errno != EINTR) return false;
    ::usleep(10'000);
  }
  errno = EWOULDBLOCK;
  return false;
}

// The `.git` placeholder of the root `root_fd`, made when missing and held (LOCK_SH); nullopt
// when the root has another kind of .git, or cordon may not create one there.
Result<std::optional<core::UniqueFd>> HoldOne(int root_fd, const std::string& git) {
  // A run that removes the placeholder (its last holder, or a clean-up of a killed run's)
  // holds LOCK_EX meanwhile: the LOCK_SH below waits for it, and then holds a directory no
  // longer named .git. Then again, with what is there now.
  for (int attempt = 0; attempt < 4; ++attempt) {
    struct stat st {};
    if (::fstatat(root_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0) {
      // Something is there. An empty directory may be a placeholder left by a killed run (or
      // by a concurrent one): hold it too, so it is removed once nobody needs it.
      if (!S_ISDIR(st.st_mode)) return std::nullopt;
    } else if (errno != ENOENT) {
      return core::FailSyscall("fstatat", git);
    } else if (::mkdirat(root_fd, ".git", 0755) != 0 && errno != EEXIST) {
      // What cordon cannot create here, the command (never more privileged) cannot either.
      if (errno == EACCES || errno == EPERM || errno == EROFS) return std::nullopt;
      return core::FailSyscall("mkdirat", fmt::format("{} (placeholder keeping .git from being "
                                                      "created in the sandbox)",
                                                      git));
    }
    core::UniqueFd dir(::openat(root_fd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) {
      if (errno == ENOENT) continue;  // removed between the two calls
      return core::FailSyscall("openat", git);
    }
    // Shared: concurrent runs on the same workspace each hold it; the last one removes it.
    // Not waited for without bound: the only exclusive holders (a last holder's or a clean-up's
    // rmdir) hold it for a moment; another process that keeps it refuses the run. (0755, not
    // 0700: the placeholder another user's run holds in a shared root must be open to this
    // one, which cannot protect .git there otherwise.)
    if (!LockShared(dir.get())) return core::FailSyscall("flock(LOCK_SH)", git);
    struct stat held {};
    struct stat named {};
    if (::fstat(dir.get(), &held) == 0 &&
        ::fstatat(root_fd, ".git", &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
      return std::optional<core::UniqueFd>(std::move(dir));
    }
  }
  return Fail(ErrorCode::kUnavailable,
              fmt::format("{}: removed and made again while this run tried to hold it", git));
}

}  // namespace

Result<GitPlaceholders> GitPlaceholders::Create(
    const std::vector<std::filesystem::path>& writable_roots,
    std::shared_ptr<const GitPlaceholderRecords> records) {
  GitPlaceholders result;
  result.records_ = std::move(records);
  for (const std::filesystem::path& root : writable_roots) {
    const std::string git = (root / ".git").string();
#if defined(__linux__)
    core::UniqueFd root_fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#else
    core::UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#endif
    if (!root_fd) return core::FailSyscall("open", root.string());
    CORDON_TRY(std::optional<core::UniqueFd> dir, HoldOne(root_fd.get(), git));
    if (!dir) continue;
    struct stat st {};
    if (result.records_ && ::fstat(dir->get(), &st) == 0) {
      result.records_->Record(st.st_dev, st.st_ino, git);
    }
    result.paths_.emplace_back(git);
    result.held_.push_back({std::move(root_fd), *std::move(dir), st.st_dev, st.st_ino});
  }
  return result;
}

GitPlaceholders& GitPlaceholders::operator=(GitPlaceholders&& other) noexcept {
  if (this != &other) {
    Release();
    held_ = std::move(other.held_);
    paths_ = std::move(other.paths_);
    records_ = std::move(other.records_);
    other.held_.clear();
    other.paths_.clear();
  }
  return *this;
}

void GitPlaceholders::Release() {
  for (Held& h : held_) {
    // Only when no other run holds it, and only if still empty (rmdir refuses otherwise): a
    // `git init` on the host during the run keeps its repository.
    if (::flock(h.dir.get(), LOCK_EX | LOCK_NB) == 0 &&
        ::unlinkat(h.root.get(), ".git", AT_REMOVEDIR) == 0 && records_) {
      records_->Forget(h.dev, h.ino);
    }
  }
  held_.clear();
  paths_.clear();
}

}  // namespace cordon::plan
