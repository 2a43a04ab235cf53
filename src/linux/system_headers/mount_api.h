// The file-descriptor based mount API (open_tree, move_mount, fsopen, fsconfig, fsmount; Linux
// 5.2) and openat2 (5.6), which Debian 12's headers lack or declare in <sys/mount.h> in a way
// that conflicts with <linux/mount.h>. Numbers and values from the kernel's uapi headers
// (include/uapi/linux/mount.h, openat2.h); the unified syscall table (>= 424) is the same on
// x86_64 and aarch64. Used by the mount view to mount onto a target it resolved itself,
// without following symlinks, instead of letting mount(2) resolve a path again.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace cordon::linux_native::sys {

inline constexpr long kNrOpenTree = 428;
inline constexpr long kNrMoveMount = 429;
inline constexpr long kNrFsopen = 430;
inline constexpr long kNrFsconfig = 431;
inline constexpr long kNrFsmount = 432;
inline constexpr long kNrOpenat2 = 437;

inline constexpr unsigned kOpenTreeClone = 1;
inline constexpr unsigned kAtEmptyPath = 0x1000;
inline constexpr unsigned kAtRecursiveTree = 0x8000;  // AT_RECURSIVE
inline constexpr unsigned kMoveMountFEmptyPath = 0x00000004;
inline constexpr unsigned kMoveMountTEmptyPath = 0x00000040;
inline constexpr unsigned kFsopenCloexec = 0x00000001;
inline constexpr unsigned kFsconfigSetString = 1;
inline constexpr unsigned kFsconfigCmdCreate = 6;
inline constexpr unsigned kFsmountCloexec = 0x00000001;

// struct open_how and its resolve flags.
struct OpenHow {
  std::uint64_t flags;
  std::uint64_t mode;
  std::uint64_t resolve;
};
inline constexpr std::uint64_t kResolveNoXdev = 0x01;
inline constexpr std::uint64_t kResolveNoMagiclinks = 0x02;
inline constexpr std::uint64_t kResolveNoSymlinks = 0x04;

inline int OpenTree(int dirfd, const char* path, unsigned flags) {
  return static_cast<int>(::syscall(kNrOpenTree, dirfd, path, flags));
}
inline int MoveMount(int from_dirfd, const char* from_path, int to_dirfd, const char* to_path,
                     unsigned flags) {
  return static_cast<int>(::syscall(kNrMoveMount, from_dirfd, from_path, to_dirfd, to_path, flags));
}
inline int Fsopen(const char* fs_name, unsigned flags) {
  return static_cast<int>(::syscall(kNrFsopen, fs_name, flags));
}
inline int Fsconfig(int fd, unsigned cmd, const char* key, const void* value, int aux) {
  return static_cast<int>(::syscall(kNrFsconfig, fd, cmd, key, value, aux));
}
inline int Fsmount(int fd, unsigned flags, unsigned attr_flags) {
  return static_cast<int>(::syscall(kNrFsmount, fd, flags, attr_flags));
}
inline int Openat2(int dirfd, const char* path, const OpenHow* how) {
  return static_cast<int>(::syscall(kNrOpenat2, dirfd, path, how, sizeof(OpenHow)));
}

}  // namespace cordon::linux_native::sys
