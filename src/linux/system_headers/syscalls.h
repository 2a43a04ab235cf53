// Kernel interfaces newer than (or missing from) Debian 12's glibc 2.36 / linux-libc-dev 6.1
// headers that cordon calls directly: mount_setattr, pidfd_open, close_range, clone. Numbers
// and structs are from the kernel's uapi headers; only x86_64 and aarch64 share these numbers
// (the unified syscall table, >= 424), which covers the architectures cordon builds for.
//
// <linux/mount.h> is not included on purpose: with glibc 2.36 it conflicts with <sys/mount.h>.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace cordon::linux_native::sys {

inline constexpr long kNrPidfdOpen = 434;
inline constexpr long kNrClone3 = 435;
inline constexpr long kNrCloseRange = 436;
inline constexpr long kNrMountSetattr = 442;

// memfd_create(2): an executable memfd where vm.memfd_noexec would make it non-executable by
// default (Linux 6.3; older kernels refuse the flag with EINVAL, and every memfd may be run).
inline constexpr unsigned kMfdExec = 0x0010U;

// mount_setattr(2)
inline constexpr unsigned kAtRecursive = 0x8000;
inline constexpr std::uint64_t kMountAttrRdonly = 0x00000001;
inline constexpr std::uint64_t kMountAttrNosuid = 0x00000002;
inline constexpr std::uint64_t kMountAttrNodev = 0x00000004;
inline constexpr std::uint64_t kMountAttrNoexec = 0x00000008;

struct MountAttr {
  std::uint64_t attr_set;
  std::uint64_t attr_clr;
  std::uint64_t propagation;
  std::uint64_t userns_fd;
};

inline long MountSetattr(int dirfd, const char* path, unsigned flags, MountAttr* attr) {
  return ::syscall(kNrMountSetattr, dirfd, path, flags, attr, sizeof(MountAttr));
}

inline int PidfdOpen(pid_t pid, unsigned flags) {
  return static_cast<int>(::syscall(kNrPidfdOpen, pid, flags));
}

// ioctl(pidfd, PIDFD_GET_INFO, &info) (Linux 6.13): the process's pid in the caller's PID
// namespace, among others; ESRCH once it has exited or when it lies outside that namespace.
struct PidfdInfo {
  std::uint64_t mask;
  std::uint64_t cgroupid;
  std::uint32_t pid;
  std::uint32_t tgid;
  std::uint32_t ppid;
  std::uint32_t ruid;
  std::uint32_t rgid;
  std::uint32_t euid;
  std::uint32_t egid;
  std::uint32_t suid;
  std::uint32_t sgid;
  std::uint32_t fsuid;
  std::uint32_t fsgid;
  std::int32_t exit_code;
};
static_assert(sizeof(PidfdInfo) == 64, "PIDFD_INFO_SIZE_VER0");
inline constexpr std::uint64_t kPidfdInfoPid = 1;
inline constexpr unsigned long kPidfdGetInfo = _IOWR(0xFF, 11, PidfdInfo);

// execveat(fd, "", argv, envp, AT_EMPTY_PATH): runs the file an (O_PATH) descriptor holds.
inline int ExecveatEmptyPath(int fd, char* const argv[], char* const envp[]) {
  return static_cast<int>(::syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH));
}

inline int CloseRange(unsigned first, unsigned last, unsigned flags) {
  return static_cast<int>(::syscall(kNrCloseRange, first, last, flags));
}

// fork()-like clone with namespace flags: no new stack, the child continues on a copy of the
// caller's. Returns the child's pid in the parent, 0 in the child, -1 with errno on failure.
// Unlike fork(), no atfork handlers run and glibc's state is not reset: the child may only make
// async-signal-safe calls (which is all cordon's child code does).
// With `parent_tid`, the kernel also stores the child's pid there (CLONE_PARENT_SETTID) before
// the call returns in the parent: a caller sharing memory with its own parent (a CLONE_VM
// relay) leaves that parent the pid even if it dies right after.
inline pid_t CloneForkLike(unsigned long flags, pid_t* parent_tid = nullptr) {
  if (parent_tid != nullptr) flags |= CLONE_PARENT_SETTID;
  // x86_64 and aarch64 argument order: flags, stack, parent_tid, child_tid, tls.
  return static_cast<pid_t>(
      ::syscall(SYS_clone, flags | SIGCHLD, nullptr, parent_tid, nullptr, nullptr));
}

// rt_sigprocmask(2) with every signal in the set, glibc's two internal ones (32, 33: thread
// cancellation and set*id across threads) included, which its sigfillset and sigprocmask leave
// out. For the calling thread; SIGKILL and SIGSTOP stay deliverable (the kernel ignores them).
// `previous` receives the mask before: RestoreSignalMask(previous) puts it back.
inline constexpr std::size_t kKernelSigsetSize = 8;  // _NSIG / 8 on x86_64 and aarch64
inline int BlockEverySignal(sigset_t* previous) {
  sigset_t all;
  __builtin_memset(&all, 0xff, sizeof all);
  return static_cast<int>(
      ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, previous, kKernelSigsetSize));
}
inline int RestoreSignalMask(const sigset_t& previous) {
  return static_cast<int>(
      ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &previous, nullptr, kKernelSigsetSize));
}

// rt_sigaction(2) to SIG_DFL, for any signal glibc reserves too. The kernel's struct sigaction
// on x86_64 and aarch64: handler, flags, restorer, mask; all zero is SIG_DFL, no flags.
struct KernelSigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  std::uint64_t mask;
};
inline int SetDefaultAction(int sig) {
  KernelSigaction dfl{};
  return static_cast<int>(::syscall(SYS_rt_sigaction, sig, &dfl, nullptr, kKernelSigsetSize));
}

}  // namespace cordon::linux_native::sys
