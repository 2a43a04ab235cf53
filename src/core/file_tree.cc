#include "core/file_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::core {
namespace {

// Deeper than any tool's cache; a deeper tree is refused rather than walked without bound.
constexpr int kMaxDepth = 256;

constexpr int kDirectoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Opens the directory `name` below `parent` without following a link. A directory its owner
// made unreadable is made readable (and writable, for `remove`) first, through a descriptor
// that does not follow a link either.
int OpenChild(int parent, const std::string& name, bool remove) {
  int fd = ::openat(parent, name.c_str(), kDirectoryFlags);
  if (fd >= 0 || errno != EACCES) return fd;
#if defined(__linux__)
  const UniqueFd path(
      ::openat(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!path) return -1;
  const std::string proc = "/proc/self/fd/" + std::to_string(path.get());
  if (::chmod(proc.c_str(), remove ? 0700 : 0500) != 0) return -1;
  return ::openat(parent, name.c_str(), kDirectoryFlags);
#else
  (void)remove;
  return -1;  // EACCES: a directory this process may not read is reported, not walked
#endif
}

Result<std::uint64_t> Walk(int fd, const std::filesystem::path& shown, bool remove, int depth) {
  if (depth > kMaxDepth) return FailSyscall("openat", shown.string(), ELOOP);
  // Entries of a read-only directory can be removed once its owner may write it again.
  if (remove) {
    struct stat self {};
    if (::fstat(fd, &self) == 0 && (self.st_mode & S_IRWXU) != S_IRWXU &&
        ::fchmod(fd, (self.st_mode & 07777) | S_IRWXU) != 0) {
      return FailSyscall("fchmod", shown.string());
    }
  }
  CORDON_TRY(const std::vector<std::string> names, DirectoryNames(fd, shown));
  std::uint64_t bytes = 0;
  for (const std::string& name : names) {
    const std::filesystem::path path = shown / name;
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return FailSyscall("fstatat", path.string());
    }
    bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
    if (S_ISDIR(st.st_mode)) {
      const UniqueFd child(OpenChild(fd, name, remove));
      if (!child) {
        if (errno == ENOENT) continue;
        return FailSyscall("openat", path.string());
      }
      CORDON_TRY(const std::uint64_t below, Walk(child.get(), path, remove, depth + 1));
      bytes += below;
    }
    if (!remove) continue;
    if (::unlinkat(fd, name.c_str(), S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0 &&
        errno != ENOENT) {
      return FailSyscall("unlinkat", path.string());
    }
  }
  return bytes;
}

Result<std::uint64_t> WalkFrom(const std::filesystem::path& dir, bool remove) {
  const UniqueFd fd(::open(dir.c_str(), kDirectoryFlags));
  if (!fd) return FailSyscall("open", dir.string());
  return Walk(fd.get(), dir, remove, 0);
}

}  // namespace

Result<std::vector<std::string>> DirectoryNames(int fd, const std::filesystem::path& shown) {
  const int copy = ::dup(fd);
  if (copy < 0) return FailSyscall("dup", shown.string());
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    const int err = errno;
    ::close(copy);
    return FailSyscall("fdopendir", shown.string(), err);
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
    errno = 0;
  }
  const int err = errno;
  ::closedir(dir);
  if (err != 0) return FailSyscall("readdir", shown.string(), err);
  return names;
}

Result<std::uint64_t> TreeSize(const std::filesystem::path& dir) { return WalkFrom(dir, false); }

Result<std::uint64_t> RemoveTreeContents(const std::filesystem::path& dir) {
  return WalkFrom(dir, true);
}

}  // namespace cordon::core
