#include "linux/seccomp_filter.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <utility>

#include "core/fd_passing.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "exec/write_calls.h"
#include "linux/seccomp_context.h"

namespace cordon::linux_native {
namespace {

using Ctx = SeccompContext;
constexpr auto Check = CheckSeccomp;

// Namespace-creating clone/unshare flags: a nested user namespace would hand the command
// capabilities again (over its own namespaces), the classic door to kernel attack surface.
// CLONE_NEWTIME (0x80) is left out for clone(): there its bits are the exit signal.
constexpr unsigned long kNewNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                                CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                                CLONE_NEWNET};
constexpr unsigned long kCloneNewTime = 0x00000080;

Result<void> DenyFlag(void* ctx, int nr, unsigned long flag) {
  return Check(
      seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
      "clone/unshare flag rule");
}

// Refuses socket(2) for every family outside `allowed` (sorted ascending). Comparisons use the
// full 64-bit argument, so garbage in the upper half is refused too.
Result<void> AllowOnlyFamilies(void* ctx, std::initializer_list<int> allowed) {
  const int nr = SCMP_SYS(socket);
  int next = 0;  // the lowest family not yet covered by a rule
  for (int family : allowed) {
    for (int f = next; f < family; ++f) {
      CORDON_TRY_VOID(Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1,
                                             SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(f))),
                            "socket family rule"));
    }
    next = family + 1;
  }
  return Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), nr, 1,
                                SCMP_A0(SCMP_CMP_GE, static_cast<scmp_datum_t>(next))),
               "socket family rule");
}

// Set-id bits on a file the command creates or changes (argument `arg` of `name` holds the
// mode): a set-user-id or set-group-id file planted in a writable root runs with its owner's
// ids when someone on the host executes it later (root's, when the caller is root).
Result<void> DenySetidMode(void* ctx, const char* name, unsigned arg) {
  const int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return {};  // not on this architecture (e.g. chmod on aarch64)
  for (scmp_datum_t bit :
       {static_cast<scmp_datum_t>(S_ISUID), static_cast<scmp_datum_t>(S_ISGID)}) {
    const scmp_arg_cmp cmp{arg, SCMP_CMP_MASKED_EQ, bit, bit};
    CORDON_TRY_VOID(Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, cmp), name));
  }
  return {};
}

Result<void> DenySetidModes(void* ctx) {
  static constexpr std::pair<const char*, unsigned> kModeArgs[] = {
      {"chmod", 1},  {"fchmod", 1}, {"fchmodat", 2}, {"creat", 1}, {"open", 2},
      {"openat", 3}, {"mkdir", 1},  {"mkdirat", 2},  {"mknod", 1}, {"mknodat", 2}};
  for (const auto& [name, arg] : kModeArgs) CORDON_TRY_VOID(DenySetidMode(ctx, name, arg));
  // fchmodat2 (Linux 6.6) may be missing from libseccomp's table: by number (the unified
  // table of x86_64 and aarch64). openat2 takes its mode in memory, where seccomp cannot look:
  // ENOSYS makes callers fall back to openat.
  constexpr int kNrFchmodat2 = 452;
  for (scmp_datum_t bit :
       {static_cast<scmp_datum_t>(S_ISUID), static_cast<scmp_datum_t>(S_ISGID)}) {
    const scmp_arg_cmp cmp{2, SCMP_CMP_MASKED_EQ, bit, bit};
    CORDON_TRY_VOID(
        Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), kNrFchmodat2, 1, cmp), "fchmodat2"));
  }
  return Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0), "openat2");
}

// The write-intent calls go to the supervisor, which reports the ones the sandbox refuses and
// lets each continue (exec/write_observer.h). An open only when its flags ask to write, create
// or truncate; with set-id modes refused, only a mode without set-id bits, so that no call
// matches both this rule and the refusal's.
Result<void> ObserveWrites(void* ctx, bool refuse_setid_modes) {
  constexpr scmp_datum_t kSetid = S_ISUID | S_ISGID;
  const scmp_arg_cmp wants_write[] = {
      {0, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY},
      {0, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR},
      {0, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT},
      {0, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC},
  };
  for (const exec::WriteCall& call : exec::ObservedWriteCalls()) {
    const int nr = seccomp_syscall_resolve_name(call.name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    std::vector<scmp_arg_cmp> common;
    if (refuse_setid_modes && call.mode_arg >= 0) {
      common.push_back({static_cast<unsigned>(call.mode_arg), SCMP_CMP_MASKED_EQ, kSetid, 0});
    }
    if (call.flags_arg < 0) {
      CORDON_TRY_VOID(
          Check(seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr,
                                       static_cast<unsigned>(common.size()), common.data()),
                call.name));
      continue;
    }
    for (scmp_arg_cmp flags : wants_write) {
      flags.arg = static_cast<unsigned>(call.flags_arg);
      std::vector<scmp_arg_cmp> cmps = common;
      cmps.push_back(flags);
      CORDON_TRY_VOID(Check(seccomp_rule_add_array(ctx, SCMP_ACT_NOTIFY, nr,
                                                   static_cast<unsigned>(cmps.size()), cmps.data()),
                            call.name));
    }
  }
  return {};
}

Result<std::vector<sock_filter>> Export(void* ctx) {
  core::UniqueFd memfd(::memfd_create("cordon-seccomp", MFD_CLOEXEC));
  if (!memfd) return core::FailSyscall("memfd_create", "cordon-seccomp");
  CORDON_TRY_VOID(Check(seccomp_export_bpf(ctx, memfd.get()), "seccomp_export_bpf"));
  off_t size = ::lseek(memfd.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) {
    return Fail(ErrorCode::kInternal, fmt::format("seccomp_export_bpf wrote {} bytes", size));
  }
  std::vector<sock_filter> program(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (::pread(memfd.get(), program.data(), static_cast<std::size_t>(size), 0) != size) {
    return core::FailSyscall("pread", "cordon-seccomp memfd");
  }
  return program;
}

}  // namespace

const std::vector<const char*>& DeniedSyscalls() {
  static const std::vector<const char*> kDenied = {
      // kernel keyring: shared across the user's sessions, holds credentials
      "keyctl", "add_key", "request_key",
      // large kernel attack surface no build needs
      "bpf", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register",
      "userfaultfd",
      // changing the mount view or entering other namespaces
      "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount",
      "fspick", "mount_setattr", "setns", "chroot",
      // the machine itself
      "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
      "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "vhangup", "syslog",
      "uselib",
      // file handles bypass path-based confinement (the classic container escape)
      "open_by_handle_at", "name_to_handle_at"};
  return kDenied;
}

Result<std::vector<sock_filter>> BuildSeccompProgram(const plan::SeccompSettings& settings) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Fail(ErrorCode::kSystem, "seccomp_init failed");
  // Foreign-architecture calls (int 0x80, x32) get numbers the rules below do not check.
  CORDON_TRY_VOID(Check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS),
                        "SCMP_FLTATR_ACT_BADARCH"));
  for (const char* name : DeniedSyscalls()) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not in this libseccomp's table: not on this arch
    CORDON_TRY_VOID(Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), nr, 0), name));
  }
  // clone3 passes its flags in memory, where seccomp cannot look: ENOSYS makes glibc fall back
  // to clone(), whose flags are checked below.
  CORDON_TRY_VOID(
      Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3"));
  for (unsigned long flag : kNewNamespaceFlags) {
    CORDON_TRY_VOID(DenyFlag(ctx.get(), SCMP_SYS(clone), flag));
    CORDON_TRY_VOID(DenyFlag(ctx.get(), SCMP_SYS(unshare), flag));
  }
  CORDON_TRY_VOID(DenyFlag(ctx.get(), SCMP_SYS(unshare), kCloneNewTime));
  // Terminal injection (TIOCSTI pushes input into a terminal; TIOCLINUX can too on a VT) and
  // line-discipline changes. The kernel compares the low 32 bits of the request.
  for (unsigned long request : {TIOCSTI, TIOCLINUX, TIOCSETD}) {
    CORDON_TRY_VOID(Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
                                           SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, request)),
                          "ioctl rule"));
  }
  switch (settings.sockets) {
    case plan::SocketPolicy::kAny:
      break;
    case plan::SocketPolicy::kLocalFamilies:
      // INET/INET6 reach only the sandbox's own network namespace; everything else (AF_VSOCK
      // to the hypervisor, AF_PACKET, Bluetooth, ...) is not namespaced or not needed.
      CORDON_TRY_VOID(AllowOnlyFamilies(ctx.get(), {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}));
      break;
    case plan::SocketPolicy::kUnixAndNetlink:
      CORDON_TRY_VOID(AllowOnlyFamilies(ctx.get(), {AF_UNIX, AF_NETLINK}));
      // Without a net namespace netlink talks to the host's kernel: keep NETLINK_ROUTE
      // (interface and route queries, which libc's getaddrinfo uses) and refuse the rest
      // (sock_diag would list the host's sockets, uevents its devices).
      CORDON_TRY_VOID(
          Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
                                 SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_NETLINK)),
                                 SCMP_A2(SCMP_CMP_NE, static_cast<scmp_datum_t>(0))),
                "netlink protocol rule"));
      break;
  }
  if (settings.refuse_unix_sockets) {
    CORDON_TRY_VOID(
        Check(seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
                               SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_UNIX))),
              "AF_UNIX socket rule"));
    // A datagram socketpair reaches any pathname datagram socket too: sendto() with an address
    // ignores the pair's peer (journald's and syslog's sockets, whatever the host binds).
    // Stream and seqpacket pairs refuse an address, so they stay.
    CORDON_TRY_VOID(Check(
        seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 2,
                         SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(AF_UNIX)),
                         SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, static_cast<scmp_datum_t>(SOCK_DGRAM))),
        "AF_UNIX datagram socketpair rule"));
  }
  if (settings.refuse_setid_modes) CORDON_TRY_VOID(DenySetidModes(ctx.get()));
  if (settings.broker_connect) {
    // Every connect(): seccomp cannot tell a unix socket or a path from an inet one (the fd and
    // the address are behind the arguments), and a CONTINUE decided on them would race with
    // the command's other threads, so the supervisor performs each one (ADR 0019).
    CORDON_TRY_VOID(
        Check(seccomp_rule_add(ctx.get(), SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0), "connect"));
    // A raw inet socket (ping, traceroute, a packet tool) fails for want of CAP_NET_RAW, which
    // no command holds: the supervisor reports it where the host would have allowed it, and
    // lets the call go on to that refusal. Rare, so free for every other socket().
    if (settings.sockets != plan::SocketPolicy::kUnixAndNetlink) {
      for (int family : {AF_INET, AF_INET6}) {
        CORDON_TRY_VOID(Check(
            seccomp_rule_add(ctx.get(), SCMP_ACT_NOTIFY, SCMP_SYS(socket), 2,
                             SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)),
                             SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, static_cast<scmp_datum_t>(SOCK_RAW))),
            "raw socket"));
      }
    }
    if (settings.observe_writes) {
      CORDON_TRY_VOID(ObserveWrites(ctx.get(), settings.refuse_setid_modes));
    }
    if (settings.observe_datagrams) {
      // A datagram sent with an address: what a connect() names, without one (UDP).
      CORDON_TRY_VOID(Check(seccomp_rule_add(ctx.get(), SCMP_ACT_NOTIFY, SCMP_SYS(sendto), 1,
                                             SCMP_A4(SCMP_CMP_NE, 0)),
                            "sendto"));
    }
  }
  return Export(ctx.get());
}

StepResult InstallSeccomp(const std::vector<sock_filter>& program, int broker_fd) {
  sock_fprog fprog{static_cast<unsigned short>(program.size()),
                   const_cast<sock_filter*>(program.data())};
  if (broker_fd < 0) {
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) {
      return StepFailed(Step::kSeccomp);
    }
    return StepOk();
  }
  const int listener = static_cast<int>(
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog));
  if (listener < 0) return StepFailed(Step::kSeccomp);
  // The socketpair is ours alone and empty: the send cannot block. Detail 1 tells this apart
  // from loading the filter.
  const int send_err = core::SendFd(broker_fd, listener);
  const StepResult result = send_err == 0 ? StepOk() : StepResult{Step::kSeccomp, send_err, 1};
  ::close(listener);
  ::close(broker_fd);
  return result;
}

}  // namespace cordon::linux_native
