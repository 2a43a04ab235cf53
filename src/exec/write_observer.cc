#include "exec/write_observer.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>

#include "core/unique_fd.h"
#include "exec/connect_broker.h"
#include "exec/notified_task.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

enum class Op { kOpen, kCreate, kRemove, kRename, kLink, kTruncate };

struct Call {
  Op op = Op::kOpen;
  int dirfd = AT_FDCWD;
  std::uint64_t path = 0;
  std::uint64_t flags = 0;  // kOpen: the open flags; kLink: linkat's flags
  int dirfd2 = AT_FDCWD;    // kRename, kLink: the new name
  std::uint64_t path2 = 0;
};

int Fd(std::uint64_t arg) { return static_cast<int>(arg); }

std::optional<Call> Decode(const seccomp_data& d) {
  const auto* a = d.args;
  switch (d.nr) {
#ifdef __NR_open
    case __NR_open:
      return Call{Op::kOpen, AT_FDCWD, a[0], a[1]};
#endif
#ifdef __NR_creat
    case __NR_creat:
      return Call{Op::kOpen, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC};
#endif
#ifdef __NR_mkdir
    case __NR_mkdir:
#endif
#ifdef __NR_mknod
    case __NR_mknod:
#endif
#if defined(__NR_mkdir) || defined(__NR_mknod)
      return Call{Op::kCreate, AT_FDCWD, a[0]};
#endif
#ifdef __NR_symlink
    case __NR_symlink:
      return Call{Op::kCreate, AT_FDCWD, a[1]};
#endif
#ifdef __NR_unlink
    case __NR_unlink:
#endif
#ifdef __NR_rmdir
    case __NR_rmdir:
#endif
#if defined(__NR_unlink) || defined(__NR_rmdir)
      return Call{Op::kRemove, AT_FDCWD, a[0]};
#endif
#ifdef __NR_rename
    case __NR_rename:
      return Call{Op::kRename, AT_FDCWD, a[0], 0, AT_FDCWD, a[1]};
#endif
#ifdef __NR_link
    case __NR_link:
      return Call{Op::kLink, AT_FDCWD, a[0], 0, AT_FDCWD, a[1]};
#endif
    case __NR_openat:
      return Call{Op::kOpen, Fd(a[0]), a[1], a[2]};
    case __NR_mkdirat:
    case __NR_mknodat:
      return Call{Op::kCreate, Fd(a[0]), a[1]};
    case __NR_symlinkat:
      return Call{Op::kCreate, Fd(a[1]), a[2]};
    case __NR_unlinkat:
      return Call{Op::kRemove, Fd(a[0]), a[1]};
    case __NR_renameat:
    case __NR_renameat2:
      return Call{Op::kRename, Fd(a[0]), a[1], 0, Fd(a[2]), a[3]};
    case __NR_linkat:
      return Call{Op::kLink, Fd(a[0]), a[1], a[4], Fd(a[2]), a[3]};
    case __NR_truncate:
      return Call{Op::kTruncate, AT_FDCWD, a[0]};
    default:
      return std::nullopt;
  }
}

// An entry the call names, found in the command's view: its directory, always; the entry
// itself when it exists (followed through a final symlink when `follow`).
struct Entry {
  UniqueFd parent;  // O_PATH of the directory holding the name
  std::string parent_path;
  std::string name;
  bool exists = false;
  mode_t type = 0;  // S_IFMT bits of what exists
  UniqueFd object;  // O_PATH of what exists
  std::string object_path;
  bool placeholder = false;  // a name held by a placeholder (WriteRules::held)
};

UniqueFd OpenInRoot(int root, const std::string& path, std::uint64_t flags, std::uint64_t resolve) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC | flags;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, root, path.c_str(), &how, sizeof how)));
}

std::string FdPath(int fd) { return ReadLinkPath("/proc/self/fd/" + std::to_string(fd)); }

// The absolute path, in the command's view, that `path` names relative to `dirfd` of `tid`.
std::string ViewPath(pid_t tid, int dirfd, const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  const std::string base = dirfd == AT_FDCWD
                               ? ReadLinkPath(ProcPath(tid, "cwd"))
                               : ReadLinkPath(ProcPath(tid, "fd/") + std::to_string(dirfd));
  if (base.empty()) return {};
  return base == "/" ? "/" + path : base + "/" + path;
}

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::optional<Entry> Lookup(int root, std::string view, bool follow,
                            const std::vector<std::string>* held = nullptr) {
  while (view.size() > 1 && view.back() == '/') view.pop_back();
  const std::size_t slash = view.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  Entry entry;
  entry.name = view.substr(slash + 1);
  if (entry.name.empty() || entry.name == "." || entry.name == "..") return std::nullopt;
  entry.parent = OpenInRoot(root, slash == 0 ? "/" : view.substr(0, slash), O_DIRECTORY, 0);
  if (!entry.parent) return std::nullopt;  // a missing parent: the command's own ENOENT
  entry.parent_path = FdPath(entry.parent.get());
  if (entry.parent_path.empty()) return std::nullopt;
  struct stat st {};
  if (::fstatat(entry.parent.get(), entry.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return entry;  // absent
  }
  entry.exists = true;
  entry.type = st.st_mode & S_IFMT;
  if (held != nullptr &&
      std::find(held->begin(), held->end(), Child(entry.parent_path, entry.name)) != held->end()) {
    // A name held for the command by a placeholder (the kernel says ENOENT through its link,
    // EISDIR or EROFS where the backend covered it otherwise): absent for the command.
    entry.exists = false;
    entry.placeholder = true;
    return entry;
  }
  if (follow && S_ISLNK(st.st_mode)) {
    entry.object = OpenInRoot(root, view, 0, 0);
    if (!entry.object) return std::nullopt;  // dangling: what it creates is not worked out here
    if (::fstat(entry.object.get(), &st) != 0) return std::nullopt;
    entry.type = st.st_mode & S_IFMT;
  } else {
    entry.object = OpenInRoot(root, view, O_NOFOLLOW, 0);
    if (!entry.object) return std::nullopt;
  }
  entry.object_path = FdPath(entry.object.get());
  if (entry.object_path.empty()) return std::nullopt;
  return entry;
}

bool ReadOnlyMount(int fd) {
  struct statvfs fs {};
  return ::fstatvfs(fd, &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

// The same path on the host is on a writable mount: read-only in the command's view is then
// the view's doing, not the host's (a read-only file system, a missing path).
bool HostWritable(const std::string& path) {
  struct statvfs fs {};
  return ::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) == 0;
}

std::uint64_t MountId(int fd) {
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0) return 0;
  return (sx.stx_mask & STATX_MNT_ID) != 0 ? sx.stx_mnt_id : 0;
}

// The file's permissions let this process (the supervisor, with the command's user) write it:
// -1 with errno EROFS when they do but its mount is read-only.
int AccessWrite(int fd) {
  return static_cast<int>(
      ::syscall(SYS_faccessat2, fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS | AT_SYMLINK_NOFOLLOW));
}

constexpr const char* kMountView = "mount view";
constexpr const char* kLandlock = "landlock";

}  // namespace

bool WriteObserver::Observes(int nr) {
  seccomp_data data{};
  data.nr = nr;
  return Decode(data).has_value();
}

std::optional<Denial> WriteObserver::Examine(const seccomp_notif& request, int listener) {
  const std::optional<Call> call = Decode(request.data);
  const pid_t tid = static_cast<pid_t>(request.pid);
  if (!call || tid <= 0) return std::nullopt;
  const std::optional<std::string> named = ReadString(tid, call->path);
  if (!named || named->empty()) return std::nullopt;
  const std::string view = ViewPath(tid, call->dirfd, *named);
  if (view.empty()) return std::nullopt;
  if (!root_) {
    // Every task of the command has this root: chroot, pivot_root, setns and new mount
    // namespaces are refused by the same filter. Kept once the task was seen still waiting
    // (its id not reused by another process meanwhile).
    UniqueFd root = OpenRoot(tid);
    std::uint64_t id = request.id;
    if (!root || ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return std::nullopt;
    root_ = std::move(root);
  }
  const UniqueFd& root = root_;
  const bool landlock = rules_.landlock_abi >= 1;
  auto outside_landlock = [&](const std::string& path) {
    return landlock && !ConnectBroker::IsBeneath(path, rules_.landlock_writable);
  };

  std::optional<Denial> found;
  // A new entry in `e.parent`: the mount's write check comes before any permission check, and
  // Landlock's before the directory's permissions (EEXIST and ENOENT were ruled out).
  auto creating = [&](const Entry& e, const char* kind) {
    const std::string target = Child(e.parent_path, e.name);
    if (ReadOnlyMount(e.parent.get())) {
      if (HostWritable(e.parent_path)) found = Denial{kind, target, kMountView, "", ""};
    } else if (outside_landlock(e.parent_path)) {
      found = Denial{kind, target, kLandlock, "", ""};
    }
  };
  // Writing what exists: its permissions are checked before the mount's write check.
  auto writing = [&](const Entry& e) {
    if (AccessWrite(e.object.get()) != 0) {
      if (errno == EROFS && HostWritable(e.object_path)) {
        found = Denial{"write", e.object_path, kMountView, "", ""};
      }
    } else if (outside_landlock(e.object_path)) {
      found = Denial{"write", e.object_path, kLandlock, "", ""};
    }
  };

  switch (call->op) {
    case Op::kOpen: {
      const std::uint64_t flags = call->flags;
      const bool creates = (flags & O_CREAT) != 0;
      const bool writes = (flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR ||
                          (flags & O_TRUNC) != 0;
      if ((flags & O_TMPFILE) == O_TMPFILE) {
        // An unnamed file in the directory the path names.
        std::optional<Entry> dir = Lookup(root.get(), view, true);
        if (!dir || !dir->exists || dir->type != S_IFDIR) break;
        Entry inside;
        inside.parent = std::move(dir->object);
        inside.parent_path = dir->object_path;
        inside.name = "(an unnamed O_TMPFILE file)";
        creating(inside, "create");
        break;
      }
      const bool exclusive = creates && (flags & O_EXCL) != 0;
      std::optional<Entry> e =
          Lookup(root.get(), view, (flags & O_NOFOLLOW) == 0 && !exclusive, &rules_.held);
      if (!e) break;
      if (e->placeholder) {
        if (creates) found = Denial{"create", Child(e->parent_path, e->name), kMountView, "", ""};
      } else if (!e->exists) {
        if (creates) creating(*e, "create");
      } else if (!exclusive && writes && e->type == S_IFREG) {
        writing(*e);
      }
      break;
    }
    case Op::kCreate: {
      std::optional<Entry> e = Lookup(root.get(), view, false);
      if (e && !e->exists) creating(*e, "create");
      break;
    }
    case Op::kRemove: {
      std::optional<Entry> e = Lookup(root.get(), view, false);
      if (!e || !e->exists) break;
      if (ReadOnlyMount(e->parent.get())) {
        if (HostWritable(e->parent_path))
          found = Denial{"remove", e->object_path, kMountView, "", ""};
      } else if (outside_landlock(e->parent_path)) {
        found = Denial{"remove", e->object_path, kLandlock, "", ""};
      }
      break;
    }
    case Op::kRename:
    case Op::kLink: {
      const bool link = call->op == Op::kLink;
      std::optional<Entry> from =
          Lookup(root.get(), view, link && (call->flags & AT_SYMLINK_FOLLOW) != 0);
      if (!from || !from->exists) break;
      const std::optional<std::string> named_to = ReadString(tid, call->path2);
      if (!named_to || named_to->empty()) break;
      std::optional<Entry> to = Lookup(root.get(), ViewPath(tid, call->dirfd2, *named_to), false);
      if (!to) break;
      if (link) {
        if (!to->exists) creating(*to, "create");
        break;
      }
      // Across mounts the answer is EXDEV, before the mount's write check.
      if (MountId(from->parent.get()) != MountId(to->parent.get())) break;
      if (ReadOnlyMount(from->parent.get())) {
        if (HostWritable(from->parent_path))
          found = Denial{"rename", from->object_path, kMountView, "", ""};
      } else if (outside_landlock(from->parent_path) || outside_landlock(to->parent_path)) {
        found = Denial{"rename", from->object_path, kLandlock, "", ""};
      }
      break;
    }
    case Op::kTruncate: {
      std::optional<Entry> e = Lookup(root.get(), view, true);
      if (!e || !e->exists || e->type != S_IFREG) break;
      // truncate(2) checks the mount before the permissions; Landlock (from ABI 3) after them.
      if (ReadOnlyMount(e->object.get())) {
        if (HostWritable(e->object_path))
          found = Denial{"write", e->object_path, kMountView, "", ""};
      } else if (rules_.landlock_abi >= 3 && AccessWrite(e->object.get()) == 0 &&
                 outside_landlock(e->object_path)) {
        found = Denial{"write", e->object_path, kLandlock, "", ""};
      }
      break;
    }
  }
  if (!found) return std::nullopt;
  // Everything above was read while the task waited in this call: the thread id named it.
  std::uint64_t id = request.id;
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return std::nullopt;
  return found;
}

}  // namespace cordon::exec
