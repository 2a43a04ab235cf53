#include "linux/open_no_symlinks.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "linux/system_headers/mount_api.h"

namespace cordon::linux_native {
namespace {

void CloseKeepErrno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

// `fd`, unless it is a symlink opened as itself (O_PATH | O_NOFOLLOW at the last component):
// then it is closed and the answer is ELOOP.
int RefuseLink(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    CloseKeepErrno(fd);
    return -1;
  }
  if (S_ISLNK(st.st_mode)) {
    ::close(fd);
    errno = ELOOP;
    return -1;
  }
  return fd;
}

int WalkNoSymlinks(const char* path) {
  if (path[0] != '/') {
    errno = EINVAL;
    return -1;
  }
  char buffer[PATH_MAX];
  const std::size_t length = std::strlen(path);
  if (length >= sizeof buffer) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(buffer, path, length + 1);
  int fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  char* next = buffer;
  while (fd >= 0) {
    while (*next == '/') ++next;
    if (*next == '\0') return fd;
    char* name = next;
    while (*next != '/' && *next != '\0') ++next;
    const bool last = *next == '\0';
    *next = '\0';
    if (!last) ++next;
    if (std::strcmp(name, "..") == 0 || std::strcmp(name, ".") == 0) {
      CloseKeepErrno(fd);
      errno = EINVAL;  // a planned path is canonical
      return -1;
    }
    const int child = ::openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    CloseKeepErrno(fd);
    if (child < 0) return -1;
    fd = RefuseLink(child);
  }
  return -1;
}

}  // namespace

int OpenNoSymlinks(const char* path) noexcept {
  sys::OpenHow how{};
  how.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = sys::kResolveNoSymlinks | sys::kResolveNoMagiclinks;
  const int fd = sys::Openat2(AT_FDCWD, path, &how);
  if (fd < 0) return errno == ENOSYS ? WalkNoSymlinks(path) : -1;
  return RefuseLink(fd);
}

}  // namespace cordon::linux_native
