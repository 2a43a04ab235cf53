#include "plan/mount_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif

namespace cordon::plan {

bool HasIdentity(MountOpKind kind) {
  switch (kind) {
    case MountOpKind::kBindWritable:
    case MountOpKind::kBindReadOnly:
    case MountOpKind::kMaskDirectory:
    case MountOpKind::kMaskFile:
      return true;
    case MountOpKind::kTmpfs:
    case MountOpKind::kDirectory:
    case MountOpKind::kHomeView:
    case MountOpKind::kResolverConfig:  // never reused: a plan with domains is not prepared
      return false;
  }
  return false;
}

std::optional<Identified> IdentifyAt(int dirfd, const char* path, bool mask) {
  Identified found;
#if defined(__linux__)
  struct statx sx {};
  if (::statx(dirfd, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
              STATX_TYPE | STATX_INO | STATX_BTIME | STATX_CTIME, &sx) != 0) {
    return std::nullopt;
  }
  found.mode = sx.stx_mode;
  // As stat's st_dev encodes it: the child compares it with fstat (linux/mount_view.cc).
  found.id.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  found.id.ino = sx.stx_ino;
  if (!mask) {
    // Device and inode alone (see the header).
  } else if ((sx.stx_mask & STATX_BTIME) != 0 && sx.stx_btime.tv_sec != 0) {
    found.id.time_sec = sx.stx_btime.tv_sec;
    found.id.time_nsec = sx.stx_btime.tv_nsec;
  } else {
    found.id.time_sec = sx.stx_ctime.tv_sec;
    found.id.time_nsec = sx.stx_ctime.tv_nsec;
  }
#else
  // Elsewhere (Seatbelt plans, which mount nothing): device, inode and the change time.
  struct stat st {};
  if (::fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  found.mode = st.st_mode;
  found.id.dev = static_cast<std::uint64_t>(st.st_dev);
  found.id.ino = static_cast<std::uint64_t>(st.st_ino);
  if (mask) found.id.time_sec = st.st_ctime;
#endif
  return found;
}

void IdentifyMounts(std::vector<MountOp>& ops) {
  for (MountOp& op : ops) {
    if (!HasIdentity(op.kind) || op.id != FileId{}) continue;
    const bool mask = op.kind == MountOpKind::kMaskDirectory || op.kind == MountOpKind::kMaskFile;
    if (auto found = IdentifyAt(AT_FDCWD, op.path.c_str(), mask)) op.id = found->id;
  }
}

}  // namespace cordon::plan
