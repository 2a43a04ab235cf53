#include "linux/placeholder_cover.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "linux/system_headers/mount_api.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::linux_native {
namespace {

void CloseKeepErrno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

// Read-only, no set-id, no devices, no execution: on a clone before it is attached.
int MakeReadOnly(int tree) {
  sys::MountAttr attr{};
  attr.attr_set =
      sys::kMountAttrRdonly | sys::kMountAttrNosuid | sys::kMountAttrNodev | sys::kMountAttrNoexec;
  return static_cast<int>(sys::MountSetattr(tree, "", sys::kAtEmptyPath, &attr));
}

// The placeholder still is what the supervisor made: a link to kPlaceholderLinkTarget.
bool IsPlaceholderLink(int fd) {
  char target[128];
  const ssize_t n = ::readlinkat(fd, "", target, sizeof(target));
  const std::size_t expected = std::strlen(kPlaceholderLinkTarget);
  return n == static_cast<ssize_t>(expected) &&
         std::memcmp(target, kPlaceholderLinkTarget, expected) == 0;
}

// `path` itself (O_PATH), resolved without following any symbolic link, and what it is; -1
// with errno otherwise.
int OpenUnfollowed(const char* path, struct stat& st) {
  sys::OpenHow how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = sys::kResolveNoSymlinks | sys::kResolveNoMagiclinks;
  const int fd = sys::Openat2(AT_FDCWD, path, &how);
  if (fd >= 0 && ::fstat(fd, &st) != 0) {
    CloseKeepErrno(fd);
    return -1;
  }
  return fd;
}

// Attaches the detached `tree` (a clone of `target`, or -1 after a failed clone) onto `target`
// itself and closes both; -1 with errno when the clone or the attach failed.
int AttachOnItself(int tree, int target) {
  if (tree < 0) {
    CloseKeepErrno(target);
    return -1;
  }
  const int rc =
      sys::MoveMount(tree, "", target, "", sys::kMoveMountFEmptyPath | sys::kMoveMountTEmptyPath);
  CloseKeepErrno(tree);
  CloseKeepErrno(target);
  return rc;
}

}  // namespace

int CoverPlaceholder(const char* path, bool directory) {
  struct stat st;
  const int target = OpenUnfollowed(path, st);
  if (target < 0) return -1;
  if (directory && !S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
  } else if (!directory && !S_ISLNK(st.st_mode)) {
    errno = S_ISDIR(st.st_mode) ? EISDIR : EMLINK;
  } else if (!directory && !IsPlaceholderLink(target)) {
    errno = EMLINK;
  } else {
    errno = 0;
  }
  int tree = -1;
  if (errno == 0) {
    tree = sys::OpenTree(target, "", sys::kOpenTreeClone | sys::kAtEmptyPath | O_CLOEXEC);
    if (tree >= 0 && MakeReadOnly(tree) != 0) {
      CloseKeepErrno(tree);
      tree = -1;
    }
  }
  return AttachOnItself(tree, target);
}

int PinDirectoryAt(const char* path) {
  struct stat st;
  const int target = OpenUnfollowed(path, st);
  if (target < 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    ::close(target);
    errno = ENOTDIR;
    return -1;
  }
  const int tree = sys::OpenTree(
      target, "", sys::kOpenTreeClone | sys::kAtRecursiveTree | sys::kAtEmptyPath | O_CLOEXEC);
  return AttachOnItself(tree, target);
}

}  // namespace cordon::linux_native
