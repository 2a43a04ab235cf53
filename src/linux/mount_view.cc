#include "linux/mount_view.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "linux/open_no_symlinks.h"
#include "linux/placeholder_cover.h"
#include "linux/system_headers/mount_api.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::linux_native {
namespace {

using plan::MountOpKind;

int PivotRoot(const char* new_root, const char* put_old) {
  return static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old));
}

// mkdir -p, for mount points that do not exist yet (a writable root below the private /tmp).
int MakeAllDirectories(const char* path) { return MakeDirectories(path, std::strlen(path)); }

// Creates the mount point `target` if missing: a directory, or an empty file when the bind
// source is not a directory.
int EnsureMountPoint(const char* target, const char* source) {
  struct stat st;
  if (::lstat(target, &st) == 0) return 0;
  bool directory = true;
  if (source != nullptr && ::stat(source, &st) == 0) directory = S_ISDIR(st.st_mode);
  if (directory) return MakeAllDirectories(target);
  const char* slash = std::strrchr(target, '/');
  if (slash != nullptr && slash != target) {
    char parent[PATH_MAX];
    std::size_t n = static_cast<std::size_t>(slash - target);
    if (n >= sizeof parent) {
      errno = ENAMETOOLONG;
      return -1;
    }
    std::memcpy(parent, target, n);
    parent[n] = '\0';
    if (MakeAllDirectories(parent) != 0) return -1;
  }
  int fd = ::open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  ::close(fd);
  return 0;
}

// Closes `fd` keeping errno (the caller reports the error of the call before).
void CloseKeepErrno(int fd) {
  const int saved = errno;
  ::close(fd);
  errno = saved;
}

// Attaches the detached mount `tree` onto the inode `target` refers to, then closes `tree`.
int AttachTree(int tree, int target) {
  if (tree < 0) return -1;
  const int rc =
      sys::MoveMount(tree, "", target, "", sys::kMoveMountFEmptyPath | sys::kMoveMountTEmptyPath);
  CloseKeepErrno(tree);
  return rc;
}

// Whether `st` is the file the plan named (ESTALE when not; {0, 0} is not checked).
bool IsPlanned(const struct stat& st, const plan::FileId& id) {
  if (id == plan::FileId{}) return true;
  if (static_cast<std::uint64_t>(st.st_dev) == id.dev &&
      static_cast<std::uint64_t>(st.st_ino) == id.ino) {
    return true;
  }
  errno = ESTALE;
  return false;
}

constexpr int kAnyType = -1;

// A recursive clone (open_tree) of the host's `source`, opened without following any symlink
// (every planned path is canonical: ELOOP when a component became one since planning), when
// it is the file the plan named (ESTALE) of the wanted type (`directory`: 1 or 0, ENOTDIR /
// EISDIR; kAnyType). -1 with errno otherwise.
int ClonePlanned(const char* source, const plan::FileId& id, int directory) {
  const int from = OpenNoSymlinks(source);
  if (from < 0) return -1;
  struct stat st;
  int tree = -1;
  if (::fstat(from, &st) != 0) {
    // errno from fstat
  } else if (directory != kAnyType && S_ISDIR(st.st_mode) != (directory == 1)) {
    errno = directory == 1 ? ENOTDIR : EISDIR;
  } else if (IsPlanned(st, id)) {
    tree = sys::OpenTree(
        from, "", sys::kOpenTreeClone | sys::kAtRecursiveTree | sys::kAtEmptyPath | O_CLOEXEC);
  }
  CloseKeepErrno(from);
  return tree;
}

// A writable root: the host's `source` (under /oldroot, still the host's read-write tree)
// opened without following a symlink and checked to be the directory the plan named, cloned
// with everything mounted beneath it, and attached onto `target`, opened the same way. A path
// swapped for a symlink or for another directory after planning fails the run instead of
// making a writable bind of something else.
int BindWritable(const ChildMount& m) {
  const int tree = ClonePlanned(m.source, m.id, kAnyType);
  if (tree < 0) return -1;
  const int target = OpenNoSymlinks(m.target);
  if (target < 0) {
    CloseKeepErrno(tree);
    return -1;
  }
  const int rc = AttachTree(tree, target);
  CloseKeepErrno(target);
  return rc;
}

// The path-based steps: private tmpfs, directories inside it, writable binds of the planned
// roots. Masks, pins and read-only binds go through ReplayResolved instead.
int ReplayOp(const ChildMount& m) {
  switch (m.kind) {
    case MountOpKind::kTmpfs:
      return ::mount("tmpfs", m.target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
    case MountOpKind::kDirectory:
      return ::mkdir(m.target, 0700) == 0 || errno == EEXIST ? 0 : -1;
    case MountOpKind::kBindWritable:
      return BindWritable(m);
    case MountOpKind::kBindReadOnly:
    case MountOpKind::kMaskDirectory:
    case MountOpKind::kMaskFile:
    case MountOpKind::kHomeView:
    case MountOpKind::kResolverConfig:
      break;
  }
  errno = EINVAL;
  return -1;
}

// An empty tmpfs, created detached and attached by descriptor: read-only with mode 0555 (a
// directory mask), or writable with mode 0755 (a hidden home's view, plan/home_view.h: its
// grants' and roots' mount points are made in it, and it is made read-only once they are
// bound, in BuildMountView).
int MountEmptyTmpfs(int target, bool read_only) {
  const int fs = sys::Fsopen("tmpfs", sys::kFsopenCloexec);
  if (fs < 0) return -1;
  if (sys::Fsconfig(fs, sys::kFsconfigSetString, "mode", read_only ? "0555" : "0755", 0) != 0 ||
      sys::Fsconfig(fs, sys::kFsconfigCmdCreate, nullptr, nullptr, 0) != 0) {
    CloseKeepErrno(fs);
    return -1;
  }
  const std::uint64_t attrs = (read_only ? sys::kMountAttrRdonly : 0) | sys::kMountAttrNosuid |
                              sys::kMountAttrNodev | sys::kMountAttrNoexec;
  const int tree = sys::Fsmount(fs, sys::kFsmountCloexec, static_cast<unsigned>(attrs));
  CloseKeepErrno(fs);
  return AttachTree(tree, target);
}

// A read-only bind of the file `source` (the host's /dev/null, cordon's resolv.conf) onto the
// file `target`.
int BindFileReadOnly(const char* source, int target) {
  const int tree = sys::OpenTree(AT_FDCWD, source, sys::kOpenTreeClone | O_CLOEXEC);
  if (tree < 0) return -1;
  sys::MountAttr attr{};
  attr.attr_set = sys::kMountAttrRdonly | sys::kMountAttrNosuid;
  if (sys::MountSetattr(tree, "", sys::kAtEmptyPath, &attr) != 0) {
    CloseKeepErrno(tree);
    return -1;
  }
  return AttachTree(tree, target);
}

// The sandbox's resolv.conf with network by domain (linux/resolver_socket.h): written once into
// the staging tmpfs (the current root until the view is done; the bind keeps the file when the
// staging root is detached) and bound read-only onto the host's resolv.conf `target`.
constexpr char kResolverConfigPath[] = "/cordon-resolv.conf";
constexpr char kResolverConfigText[] =
    "# cordon, network by domain: names resolve through cordon's resolver, which answers for\n"
    "# the allowed domains only (docs/network-domains.md). edns0: answers up to 1200 bytes come\n"
    "# in one UDP message.\n"
    "nameserver 127.0.0.1\n"
    "options edns0\n";

int BindResolverConfig(int target) {
  const int fd =
      ::open(kResolverConfigPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) return -1;
  const std::size_t size = sizeof kResolverConfigText - 1;
  const bool written = ::write(fd, kResolverConfigText, size) == static_cast<ssize_t>(size);
  CloseKeepErrno(fd);
  if (!written) {
    errno = EIO;
    return -1;
  }
  return BindFileReadOnly(kResolverConfigPath, target);
}

// Binds the directory `target` onto itself: a mount point cannot be renamed or removed, so the
// command cannot move a masked secret's ancestor away (for a later run to miss the mask).
int PinDirectory(int target) {
  return AttachTree(
      sys::OpenTree(target, "",
                    sys::kOpenTreeClone | sys::kAtEmptyPath | sys::kAtRecursiveTree | O_CLOEXEC),
      target);
}

// A recursive read-only copy of the host's `source` (opened without following symlinks; it must
// have the target's type) attached onto `target`: .git and the read_only workspace.
int BindReadOnly(const char* source, const plan::FileId& id, int target, bool directory) {
  const int tree = ClonePlanned(source, id, directory ? 1 : 0);
  if (tree < 0) return -1;
  sys::MountAttr attr{};
  attr.attr_set = sys::kMountAttrRdonly | sys::kMountAttrNosuid;
  if (sys::MountSetattr(tree, "", sys::kAtEmptyPath | sys::kAtRecursive, &attr) != 0) {
    CloseKeepErrno(tree);
    return -1;
  }
  return AttachTree(tree, target);
}

// Masks and pins: the target is resolved here, below the new root, without following any
// symlink (ELOOP when a component became one), its type is checked against the plan (ENOTDIR /
// EISDIR when it changed), and the mount is attached to that very inode. A required target
// that vanished is ENOENT; an optional one is skipped. `unreachable_is_masked`: a mask whose
// target this process cannot even look up (EACCES: a directory on the way is not searchable
// for it) is not needed — see MaskUnreachable below.
// Whether `path` lies in (or is) the target of one of the view's writable binds. Outside
// them the view is the host's tree bound read-only: no mode, owner or ACL on the way can be
// changed there. So a path this process — root of the user namespace, with every capability
// over the inodes whose owner and group it maps — cannot look up is one the command, with the
// same ids and no capabilities, cannot look up either (for a root caller, a socket in another
// user's 0700 directory): masking it adds nothing, and it is skipped instead of refusing every
// run. Within a writable root the command could make such a directory searchable again
// (chmod of its own), so there the mask stays required; and so it does in a view later
// commands reuse (ChildContext::view_reused), which outlives what this lookup found.
bool BeneathWritableBind(const ChildContext& c, const char* path) {
  for (const ChildMount& w : c.mounts) {
    if (w.kind != MountOpKind::kBindWritable) continue;
    std::size_t n = 0;
    while (w.target[n] != '\0' && w.target[n] == path[n]) ++n;
    if (w.target[n] == '\0' && (path[n] == '\0' || path[n] == '/')) return true;
  }
  return false;
}

int ReplayResolved(const ChildMount& m, bool unreachable_is_masked) {
  const int target = OpenNoSymlinks(m.target);
  if (target < 0 && errno == EACCES && unreachable_is_masked) return 0;
  if (target < 0) return m.optional && errno == ENOENT ? 0 : -1;
  struct stat st;
  int rc = -1;
  if (::fstat(target, &st) != 0) {
    // errno from fstat
  } else {
    // A secret (or a directory to pin) replaced by a symlink since planning is ELOOP already.
    const bool directory = S_ISDIR(st.st_mode);
    switch (m.kind) {
      case MountOpKind::kMaskDirectory:
        if (directory)
          rc = MountEmptyTmpfs(target, /*read_only=*/true);
        else
          errno = ENOTDIR;
        break;
      case MountOpKind::kMaskFile:
        if (!directory)
          rc = BindFileReadOnly(m.source, target);
        else
          errno = EISDIR;
        break;
      case MountOpKind::kBindWritable:
        if (directory)
          rc = PinDirectory(target);
        else
          errno = ENOTDIR;
        break;
      case MountOpKind::kBindReadOnly:
        rc = BindReadOnly(m.source, m.id, target, directory);
        break;
      case MountOpKind::kHomeView:
        if (directory)
          rc = MountEmptyTmpfs(target, /*read_only=*/false);
        else
          errno = ENOTDIR;
        break;
      case MountOpKind::kResolverConfig:
        if (!directory)
          rc = BindResolverConfig(target);
        else
          errno = EISDIR;
        break;
      case MountOpKind::kTmpfs:
      case MountOpKind::kDirectory:
        errno = EINVAL;
        break;
    }
  }
  // An optional mask whose target was unlinked after it was opened (a host socket whose server
  // just exited): the kernel refuses to mount on an unlinked entry (ENOENT). There is nothing
  // left to hide, as when it vanished before the open; a socket bound there later meets the
  // connect broker (decision 0019).
  if (rc != 0 && errno == ENOENT && m.optional &&
      (m.kind == MountOpKind::kMaskFile || m.kind == MountOpKind::kMaskDirectory)) {
    rc = 0;
  }
  CloseKeepErrno(target);
  return rc;
}

}  // namespace

StepResult CoverPlaceholders(const std::vector<ChildCover>& covers, const char* ignore_path,
                             const char* ignore_text) {
  for (std::size_t i = 0; i < covers.size(); ++i) {
    const int rc = covers[i].pin ? PinDirectoryAt(covers[i].path)
                                 : CoverPlaceholder(covers[i].path, covers[i].directory);
    if (rc != 0) {
      return StepFailed(Step::kPlaceholderCover, static_cast<int>(i));
    }
  }
  if (ignore_path == nullptr || ignore_text == nullptr) return StepOk();
  const char* slash = std::strrchr(ignore_path, '/');
  if (slash == nullptr ||
      MakeDirectories(ignore_path, static_cast<std::size_t>(slash - ignore_path)) != 0) {
    return StepFailed(Step::kPlaceholderCover, static_cast<int>(covers.size()));
  }
  const int fd = ::open(ignore_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return StepFailed(Step::kPlaceholderCover, static_cast<int>(covers.size()));
  const std::size_t size = std::strlen(ignore_text);
  const bool written = ::write(fd, ignore_text, size) == static_cast<ssize_t>(size);
  ::close(fd);
  if (!written) {
    errno = EIO;
    return StepFailed(Step::kPlaceholderCover, static_cast<int>(covers.size()));
  }
  return StepOk();
}

namespace {

StepResult MountProc() {
  if (::mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return StepFailed(Step::kProc);
  }
  for (std::size_t i = 0; i < kProcReadOnlyPaths.size(); ++i) {
    const char* path = kProcReadOnlyPaths[i];
    if (::access(path, F_OK) != 0) continue;  // not on this kernel
    if (::mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
        SetMountAttr(path,
                     sys::kMountAttrRdonly | sys::kMountAttrNosuid | sys::kMountAttrNodev |
                         sys::kMountAttrNoexec,
                     true) != 0) {
      return StepFailed(Step::kProcReadOnly, static_cast<int>(i));
    }
  }
  return StepOk();
}

StepResult MountDev() {
  if (::mount("tmpfs", "/newroot/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") != 0) {
    return StepFailed(Step::kDev);
  }
  char target[64];
  char source[64];
  for (std::size_t i = 0; i < kDevNodes.size(); ++i) {
    // Bounded: the node names are short constants.
    std::strcpy(target, "/newroot/dev/");
    std::strcat(target, kDevNodes[i]);
    std::strcpy(source, "/oldroot/dev/");
    std::strcat(source, kDevNodes[i]);
    int fd = ::open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return StepFailed(Step::kDevNode, static_cast<int>(i));
    ::close(fd);
    if (::mount(source, target, nullptr, MS_BIND, nullptr) != 0) {
      return StepFailed(Step::kDevNode, static_cast<int>(i));
    }
  }
  if (::mkdir("/newroot/dev/pts", 0755) != 0 ||
      ::mount("devpts", "/newroot/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=620") != 0 ||
      ::symlink("pts/ptmx", "/newroot/dev/ptmx") != 0) {
    return StepFailed(Step::kDevPts);
  }
  if (::mkdir("/newroot/dev/shm", 01777) != 0 ||
      ::mount("tmpfs", "/newroot/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) {
    return StepFailed(Step::kDevShm);
  }
  if (::symlink("/proc/self/fd", "/newroot/dev/fd") != 0 ||
      ::symlink("/proc/self/fd/0", "/newroot/dev/stdin") != 0 ||
      ::symlink("/proc/self/fd/1", "/newroot/dev/stdout") != 0 ||
      ::symlink("/proc/self/fd/2", "/newroot/dev/stderr") != 0) {
    return StepFailed(Step::kDevLinks);
  }
  // Nothing new can be created in /dev itself; the nodes, pts and shm are their own mounts.
  if (SetMountAttr("/newroot/dev", sys::kMountAttrRdonly, false) != 0) {
    return StepFailed(Step::kDevReadOnly);
  }
  return StepOk();
}

}  // namespace

StepResult BuildMountView(const ChildContext& c) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return StepFailed(Step::kMountPrivate);
  }
  if (::mount("tmpfs", kStagingMountPoint, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    return StepFailed(Step::kStagingTmpfs);
  }
  // pivot_root moves the staging tmpfs off /tmp, so /oldroot/tmp is the host's /tmp again.
  if (::chdir(kStagingMountPoint) != 0 || ::mkdir("newroot", 0755) != 0 ||
      ::mkdir("oldroot", 0755) != 0 || PivotRoot(".", "oldroot") != 0 || ::chdir("/") != 0) {
    return StepFailed(Step::kPivotToStaging);
  }
  if (::mount(kOldRoot, kNewRoot, nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    return StepFailed(Step::kBindHostRoot);
  }
  if (SetMountAttr(kNewRoot, sys::kMountAttrRdonly | sys::kMountAttrNosuid | sys::kMountAttrNodev,
                   true) != 0) {
    return StepFailed(Step::kHostRootReadOnly);
  }
  for (std::size_t i = 0; i < c.mounts.size(); ++i) {
    const ChildMount& m = c.mounts[i];
    const bool mask = m.kind == MountOpKind::kMaskDirectory || m.kind == MountOpKind::kMaskFile;
    if (m.kind == MountOpKind::kHomeView) {
      if (ReplayResolved(m, false) != 0) return StepFailed(Step::kMountOp, static_cast<int>(i));
      continue;
    }
    // The host's resolv.conf, or where it would be in a private tmpfs (a link into /run).
    if (m.kind == MountOpKind::kResolverConfig) {
      if (EnsureMountPoint(m.target, m.source) != 0) {
        return StepFailed(Step::kMountPoint, static_cast<int>(i));
      }
      if (ReplayResolved(m, false) != 0) return StepFailed(Step::kMountOp, static_cast<int>(i));
      continue;
    }
    // A read-only bind's mount point may be missing (the read_only workspace below the private
    // /tmp): created first in the tmpfs, then resolved like a mask.
    if (m.kind == MountOpKind::kBindReadOnly && EnsureMountPoint(m.target, m.source) != 0) {
      return StepFailed(Step::kMountPoint, static_cast<int>(i));
    }
    if (mask || m.optional || m.kind == MountOpKind::kBindReadOnly) {
      if (ReplayResolved(m, mask && !c.view_reused && !BeneathWritableBind(c, m.target)) != 0) {
        return StepFailed(Step::kMountOp, static_cast<int>(i));
      }
      continue;
    }
    const bool needs_point = m.kind == MountOpKind::kBindWritable ||
                             m.kind == MountOpKind::kBindReadOnly || m.kind == MountOpKind::kTmpfs;
    if (needs_point && EnsureMountPoint(m.target, m.source) != 0) {
      return StepFailed(Step::kMountPoint, static_cast<int>(i));
    }
    if (ReplayOp(m) != 0) return StepFailed(Step::kMountOp, static_cast<int>(i));
  }
  // The hidden homes' views stay empty from here (their mounts keep their own flags).
  for (std::size_t i = 0; i < c.mounts.size(); ++i) {
    if (c.mounts[i].kind != MountOpKind::kHomeView) continue;
    if (SetMountAttr(c.mounts[i].target, sys::kMountAttrRdonly, false) != 0) {
      return StepFailed(Step::kMountOp, static_cast<int>(i));
    }
  }
  if (auto r = CoverPlaceholders(c.covers, c.ignore_path, c.ignore_text); r.failed()) return r;
  if (auto r = MountProc(); r.failed()) return r;
  if (auto r = MountDev(); r.failed()) return r;
  // Every bind has been taken from the host tree; it is not needed any more.
  if (::umount2(kOldRoot, MNT_DETACH) != 0) return StepFailed(Step::kDetachHost);
  // pivot_root(".", ".") stacks the staging root on top of the new one; detaching "." then
  // removes the staging root and leaves /newroot as "/".
  if (::chdir(kNewRoot) != 0 || PivotRoot(".", ".") != 0) return StepFailed(Step::kPivotRoot);
  if (::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0) {
    return StepFailed(Step::kDetachStaging);
  }
  return StepOk();
}

int MakeDirectories(const char* path, std::size_t len) {
  char buffer[PATH_MAX];
  if (len >= sizeof buffer) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(buffer, path, len);
  buffer[len] = '\0';
  for (std::size_t i = 1; i <= len; ++i) {
    if (buffer[i] != '/' && buffer[i] != '\0') continue;
    const char saved = buffer[i];
    buffer[i] = '\0';
    if (::mkdir(buffer, 0755) != 0 && errno != EEXIST) return -1;
    buffer[i] = saved;
  }
  return 0;
}

int SetMountAttr(const char* path, std::uint64_t attr_set, bool recursive) {
  sys::MountAttr attr{};
  attr.attr_set = attr_set;
  return static_cast<int>(
      sys::MountSetattr(AT_FDCWD, path, recursive ? sys::kAtRecursive : 0, &attr));
}

}  // namespace cordon::linux_native
