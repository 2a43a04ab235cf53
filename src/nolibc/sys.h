// The few Linux system calls of cordon's executables without a C library (decision 0028): the
// `cordon` front and cordon-init are linked with -nostdlib so that their execve maps a few pages
// and runs no start-up code. Every call returns the kernel's result: a value >= 0, or -errno.
// The entry point is CORDON_NOLIBC_START (below), which calls NolibcMain(stack).
#pragma once

#include <asm/unistd.h>
#include <linux/fcntl.h>
#include <linux/stat.h>
#include <stddef.h>
#include <stdint.h>

namespace cordon::nolibc {

inline long Sys(long n, long a = 0, long b = 0, long c = 0, long d = 0, long e = 0, long f = 0) {
#if defined(__x86_64__)
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  register long x4 asm("x4") = e;
  register long x5 asm("x5") = f;
  asm volatile("svc 0"
               : "+r"(x0)
               : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
               : "memory");
  return x0;
#else
#error "the cordon front supports x86_64 and aarch64 (src/front/CMakeLists.txt)"
#endif
}

inline constexpr long kEintr = 4;
inline constexpr long kEagain = 11;
inline constexpr long kEnoent = 2;
inline constexpr long kEacces = 13;
inline constexpr long kEnotdir = 20;
inline constexpr long kEmsgsize = 90;
inline constexpr long kEproto = 71;
inline constexpr long kEstale = 116;
inline constexpr long kE2big = 7;

// The kernel's structures of the socket calls (64-bit layouts).
struct Iovec {
  const void* base;
  size_t length;
};
struct MsgHdr {
  void* name = nullptr;
  int name_length = 0;
  Iovec* iov = nullptr;
  size_t iov_count = 0;
  void* control = nullptr;
  size_t control_length = 0;
  unsigned flags = 0;
};
struct CmsgHdr {
  size_t length;
  int level;
  int type;
};
struct SockaddrUn {
  unsigned short family;
  char path[108];
};
struct Ucred {
  int pid;
  unsigned uid;
  unsigned gid;
};
struct Pollfd {
  int fd;
  short events;
  short revents;
};
struct Timespec {
  long seconds;
  long nanoseconds;
};

inline constexpr int kAfUnix = 1;
inline constexpr int kSockStream = 1;
inline constexpr int kSockNonblock = 04000;
inline constexpr int kSockCloexec = 02000000;
inline constexpr int kSolSocket = 1;
inline constexpr int kSoPeercred = 17;
inline constexpr int kSoPassPidfd = 76;  // Linux 6.5
inline constexpr int kSoPeerPidfd = 77;  // Linux 6.5
inline constexpr int kScmRights = 1;
inline constexpr int kMsgNosignal = 0x4000;
inline constexpr short kPollIn = 0x1;
inline constexpr int kFGetfd = 1;
inline constexpr int kFSetfd = 2;
inline constexpr int kFSetfl = 4;
inline constexpr int kFdCloexec = 1;
inline constexpr int kMsgCmsgCloexec = 0x40000000;
inline constexpr int kMsgCtrunc = 0x8;
inline constexpr int kPrSetDumpable = 4;

inline long Read(int fd, void* buffer, size_t size) {
  return Sys(__NR_read, fd, (long)buffer, (long)size);
}
inline long Write(int fd, const void* data, size_t size) {
  return Sys(__NR_write, fd, (long)data, (long)size);
}
inline long Close(int fd) { return Sys(__NR_close, fd); }
// The kernel's struct statfs on the 64-bit architectures above (every field a long but f_fsid).
struct StatFs {
  long type;
  long block_size;
  long blocks;
  long blocks_free;
  long blocks_available;
  long files;
  long files_free;
  int fsid[2];
  long name_length;
  long fragment_size;
  long flags;
  long spare[4];
};
inline constexpr long kTmpfsMagic = 0x01021994;
inline long Statfs(const char* path, StatFs* out) {
  return Sys(__NR_statfs, (long)path, (long)out);
}
inline long Getdents64(int fd, void* buffer, size_t size) {
  return Sys(__NR_getdents64, fd, (long)buffer, (long)size);
}
inline long OpenAt(int dir, const char* path, int flags) {
  return Sys(__NR_openat, dir, (long)path, flags, 0);
}
inline long ReadLink(const char* path, char* buffer, size_t size) {
  return Sys(__NR_readlinkat, AT_FDCWD, (long)path, (long)buffer, (long)size);
}
inline long Statx(int dir, const char* path, int flags, struct statx* out) {
  return Sys(__NR_statx, dir, (long)path, flags, STATX_BASIC_STATS, (long)out);
}
inline long Ioctl(int fd, unsigned long request, void* argument) {
  return Sys(__NR_ioctl, fd, static_cast<long>(request), reinterpret_cast<long>(argument));
}
inline long Fcntl(int fd, int command, long argument) {
  return Sys(__NR_fcntl, fd, command, argument);
}
inline long Socket(int domain, int type) { return Sys(__NR_socket, domain, type, 0); }
inline long Connect(int fd, const SockaddrUn* address) {
  return Sys(__NR_connect, fd, (long)address, sizeof *address);
}
inline long GetSockOpt(int fd, int option, void* value, unsigned* length) {
  return Sys(__NR_getsockopt, fd, kSolSocket, option, (long)value, (long)length);
}
inline long SetSockOpt(int fd, int option, int value) {
  return Sys(__NR_setsockopt, fd, kSolSocket, option, (long)&value, sizeof value);
}
inline long SendMsg(int fd, const MsgHdr* message) {
  return Sys(__NR_sendmsg, fd, (long)message, kMsgNosignal);
}
inline long RecvMsg(int fd, MsgHdr* message, int flags) {
  return Sys(__NR_recvmsg, fd, (long)message, flags);
}
inline long Send(int fd, const void* data, size_t size) {
  return Sys(__NR_sendto, fd, (long)data, (long)size, kMsgNosignal, 0, 0);
}
inline long Wait4(int pid, int* status) { return Sys(__NR_wait4, pid, (long)status, 0, 0); }
inline long Prctl(int option, long argument) { return Sys(__NR_prctl, option, argument, 0, 0, 0); }
// Anonymous private read-write memory; -errno on failure.
inline long MapAnonymous(size_t size) {
  return Sys(__NR_mmap, 0, (long)size, 0x1 | 0x2 /* PROT_READ|PROT_WRITE */,
             0x02 | 0x20 /* MAP_PRIVATE|MAP_ANONYMOUS */, -1, 0);
}
inline long Dup3(int from, int to) { return Sys(__NR_dup3, from, to, 0); }
inline long Chdir(const char* path) { return Sys(__NR_chdir, (long)path); }
// Waits up to `milliseconds` for input on `fd`: > 0 ready (or hung up), 0 timed out.
inline long PollIn(int fd, long milliseconds) {
  Pollfd p{fd, kPollIn, 0};
  Timespec limit{milliseconds / 1000, (milliseconds % 1000) * 1000000};
  return Sys(__NR_ppoll, (long)&p, 1, (long)&limit, 0, 0);
}
// CLOCK_MONOTONIC in milliseconds (0 if the clock cannot be read).
inline long MonotonicMs() {
  Timespec now{0, 0};
  if (Sys(__NR_clock_gettime, 1 /* CLOCK_MONOTONIC */, (long)&now) != 0) return 0;
  return now.seconds * 1000 + now.nanoseconds / 1000000;
}
inline long GetEuid() { return Sys(__NR_geteuid); }
inline long GetCwd(char* buffer, size_t size) { return Sys(__NR_getcwd, (long)buffer, (long)size); }
inline long PidfdSendSignal(int pidfd, int signal) {
  return Sys(__NR_pidfd_send_signal, pidfd, signal, 0, 0);
}
inline long Execve(const char* path, char* const* argv, char* const* envp) {
  return Sys(__NR_execve, (long)path, (long)argv, (long)envp);
}
[[noreturn]] inline void Exit(int code) {
  for (;;) Sys(__NR_exit_group, code);
}

}  // namespace cordon::nolibc

// The entry point: the kernel's initial stack (argc, argv, NULL, envp, NULL, auxv) to
// `extern "C" [[noreturn]] void NolibcMain(long* stack)`, on a 16-byte aligned stack. Used once
// per executable, at file scope.
#if defined(__x86_64__)
#define CORDON_NOLIBC_START                                                       \
  asm(".text\n.global _start\n.type _start,@function\n_start:\n"                  \
      "  xor %rbp, %rbp\n  mov %rsp, %rdi\n  and $-16, %rsp\n  call NolibcMain\n" \
      "  hlt\n")
#elif defined(__aarch64__)
#define CORDON_NOLIBC_START                                              \
  asm(".text\n.global _start\n.type _start,@function\n_start:\n"         \
      "  mov x29, #0\n  mov x30, #0\n  mov x0, sp\n  and sp, x0, #-16\n" \
      "  bl NolibcMain\n")
#endif
