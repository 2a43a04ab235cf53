// Probes by real attempts in throw-away children, so a feature counts as present only when it
// works for this user on this machine (a sysctl, an AppArmor rule, a container's seccomp
// profile or a missing kernel option all show up the same way: the attempt fails).
#include "linux/kernel_features.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "linux/system_headers/landlock.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::linux_native {
namespace {

// What the namespace probe child reports: 0 = worked, an errno = failed, -1 = not reached.
struct NamespaceReport {
  int user = -1;
  int mount = -1;
  int pid = -1;
  int net = -1;
  int ipc = -1;
  int uts = -1;
  int proc = -1;
  int setattr = -1;  // mount_setattr(MOUNT_ATTR_RDONLY) on a mount of the new namespace
};

int WriteFile(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = ::write(fd, text, std::strlen(text));
  int err = n < 0 ? errno : 0;
  ::close(fd);
  return err;
}

[[noreturn]] void SendAndExit(int report_fd, const NamespaceReport& r) {
  (void)!::write(report_fd, &r, sizeof r);
  ::_exit(0);
}

// Child half of the namespace probe. Only async-signal-safe calls: the caller may be threaded.
[[noreturn]] void NamespaceProbeChild(int report_fd, const char* uid_map, const char* gid_map) {
  NamespaceReport r;
  auto send = [&] [[noreturn]] { SendAndExit(report_fd, r); };
  r.user = ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
  if (r.user != 0) send();
  if (int e = WriteFile("/proc/self/setgroups", "deny"); e != 0 && e != ENOENT) r.user = e;
  if (int e = WriteFile("/proc/self/uid_map", uid_map); e != 0) r.user = e;
  if (int e = WriteFile("/proc/self/gid_map", gid_map); e != 0) r.user = e;
  if (r.user != 0) send();
  r.mount = ::unshare(CLONE_NEWNS) == 0 ? 0 : errno;
  r.ipc = ::unshare(CLONE_NEWIPC) == 0 ? 0 : errno;
  r.uts = ::unshare(CLONE_NEWUTS) == 0 ? 0 : errno;
  r.net = ::unshare(CLONE_NEWNET) == 0 ? 0 : errno;
  r.pid = ::unshare(CLONE_NEWPID) == 0 ? 0 : errno;
  if (r.mount != 0 || r.pid != 0) send();
  // Scratch mounts in the probe's own mount namespace, as the sandbox's init will make them.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/tmp", "tmpfs", 0, "mode=0700") != 0 || ::mkdir("/tmp/proc", 0700) != 0 ||
      ::mkdir("/tmp/ro", 0700) != 0 || ::mount("tmpfs", "/tmp/ro", "tmpfs", 0, nullptr) != 0) {
    r.proc = errno;
    send();
  }
  sys::MountAttr attr{};
  attr.attr_set = sys::kMountAttrRdonly;
  r.setattr = sys::MountSetattr(AT_FDCWD, "/tmp/ro", sys::kAtRecursive, &attr) == 0 ? 0 : errno;
  // The first child after unshare(CLONE_NEWPID) is PID 1 of the new namespace: let it try the
  // fresh /proc mount that the sandbox's init will do.
  pid_t init = ::fork();
  if (init < 0) {
    r.pid = errno;
    send();
  }
  if (init == 0) {
    if (::mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
      ::_exit(errno);
    }
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  r.proc = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
  SendAndExit(report_fd, r);
}

NamespaceReport ProbeNamespaces() {
  NamespaceReport report;
  // Prepared before fork: the child must not allocate.
  std::string uid_map = fmt::format("{0} {0} 1\n", ::geteuid());
  std::string gid_map = fmt::format("{0} {0} 1\n", ::getegid());
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return report;
  // A raw clone, not fork(): the caller may be a threaded server or an embedder, whose
  // pthread_atfork handlers must not run in a child that only makes system calls.
  pid_t pid = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, 0, nullptr, nullptr, 0));
  if (pid == 0) {
    ::close(fds[0]);
    NamespaceProbeChild(fds[1], uid_map.c_str(), gid_map.c_str());
  }
  ::close(fds[1]);
  if (pid > 0) {
    NamespaceReport got;
    ssize_t n;
    do {
      n = ::read(fds[0], &got, sizeof got);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof got)) report = got;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  ::close(fds[0]);
  return report;
}

// Whether something is mounted over part of /proc, as container runtimes do to mask /proc/kcore,
// /proc/keys, /proc/acpi and the like. The kernel then refuses a fresh proc mount in a user
// namespace (it would reveal what the masks cover), so the quick probe cannot assume one works.
// binfmt_misc's mount point is a permanently empty directory, which the kernel accepts.
bool ProcHasOverMounts() {
  FILE* mountinfo = std::fopen("/proc/self/mountinfo", "re");
  if (mountinfo == nullptr) return false;
  bool found = false;
  char* line = nullptr;
  std::size_t size = 0;
  while (!found && ::getline(&line, &size, mountinfo) > 0) {
    // "36 35 98:0 /root /mount/point options ...": the fifth field is the mount point.
    const char* field = line;
    for (int skip = 0; skip < 4 && field != nullptr; ++skip) {
      field = std::strchr(field, ' ');
      if (field != nullptr) ++field;
    }
    if (field == nullptr) continue;
    const std::string_view point(field, std::strcspn(field, " "));
    found = point.starts_with("/proc/") && point != "/proc/sys/fs/binfmt_misc";
  }
  std::free(line);
  std::fclose(mountinfo);
  return found;
}

// 0 when a throw-away child can install an allow-all filter after no_new_privs (with a
// listener: SECCOMP_FILTER_FLAG_NEW_LISTENER), else the errno it failed with. A child, so that
// this process stays unfiltered.
int TryFilterInChild(bool with_listener) {
  pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    sock_filter allow_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog program{1, allow_all};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(errno);
    const long rc = with_listener ? ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                              SECCOMP_FILTER_FLAG_NEW_LISTENER, &program)
                                  : ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
    ::_exit(rc < 0 ? errno : 0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

// 0 when a filter with a listener can be installed here, else the errno (EBUSY: a filter above
// us has one). Forks only when this process already runs under a seccomp filter.
int ProbeSeccompListener() {
  std::uint32_t action = SECCOMP_RET_USER_NOTIF;
  if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) return errno;
  char status[4096];
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? ::read(fd, status, sizeof status - 1) : -1;
  if (fd >= 0) ::close(fd);
  status[n > 0 ? n : 0] = '\0';
  const char* mode = std::strstr(status, "\nSeccomp:");
  if (mode != nullptr && std::strtol(mode + 9, nullptr, 10) == 0) return 0;  // no filter at all
  return TryFilterInChild(/*with_listener=*/true);
}

void Note(std::string& notes, const char* what, int err) {
  if (err == 0) return;
  if (!notes.empty()) notes += "; ";
  if (err < 0) {
    notes += fmt::format("{}: not tried (an earlier step failed)", what);
  } else {
    notes += fmt::format("{}: {}", what, std::strerror(err));
  }
}

// The probes that are cheap at any depth: Landlock's ABI, seccomp, pidfd_open.
void ProbeCheapFeatures(KernelFeatures& f, bool try_seccomp_in_child) {
  long abi = sys::LandlockCreateRuleset(nullptr, 0, sys::kLandlockCreateRulesetVersion);
  if (abi > 0) {
    f.landlock_abi = static_cast<int>(abi);
  } else {
    Note(f.notes, "landlock_create_ruleset(VERSION)", errno);
  }

  int seccomp_err = 0;
  if (try_seccomp_in_child) {
    seccomp_err = TryFilterInChild(/*with_listener=*/false);
  } else {
    // Asks the filter-mode interface a question without installing anything; a container
    // that refuses seccomp(2) itself answers EPERM/ENOSYS here, as it would at launch.
    std::uint32_t action = SECCOMP_RET_ERRNO;
    if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) seccomp_err = errno;
  }
  f.seccomp = seccomp_err == 0;
  Note(f.notes, "seccomp(SECCOMP_MODE_FILTER)", seccomp_err);
  if (f.seccomp) {
    const int listener_err = ProbeSeccompListener();
    f.seccomp_listener = listener_err == 0;
    Note(f.notes, "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER)", listener_err);
  }

  int pidfd = sys::PidfdOpen(::getpid(), 0);
  if (pidfd >= 0) {
    f.pidfd = true;
    ::close(pidfd);
  } else {
    Note(f.notes, "pidfd_open", errno);
  }
}

int ExitAtOnce(void*) { return 0; }

// 0 when a child can be created in a new user namespace, else the errno. The child exits at
// once: creating the namespace is the whole test (a seccomp filter or an LSM refusing
// unshare/clone, a container without user namespaces, a zero max_user_namespaces all fail it).
// CLONE_VM|CLONE_VFORK: no copy of the caller's page tables (the caller waits the few
// microseconds until the child has exited); CLONE_NEWUSER only conflicts with CLONE_FS.
int ProbeUserNamespace() {
  // On the caller's stack: the caller is suspended (CLONE_VFORK) while the child runs on it.
  alignas(16) char stack[16384];
  pid_t pid = ::clone(&ExitAtOnce, stack + sizeof stack,
                      CLONE_VM | CLONE_VFORK | CLONE_NEWUSER | SIGCHLD, nullptr);
  if (pid < 0) return errno;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : ECHILD;
}

// 0 unless /proc/sys/user/<name> reads as 0 (the kind is switched off for everyone): ENOSPC,
// the errno unshare gives then. A missing file (older kernel) says nothing: 0.
int NamespaceLimit(const char* name) {
  char path[64] = "/proc/sys/user/";
  std::strncat(path, name, sizeof path - std::strlen(path) - 1);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[32] = {};
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  return n > 0 && text[0] == '0' && (text[1] == '\n' || text[1] == '\0') ? ENOSPC : 0;
}

}  // namespace

KernelFeatures ProbeKernel() {
  KernelFeatures f;
  f.namespaces_assumed = true;
  int user = ProbeUserNamespace();
  if (user == 0) user = NamespaceLimit("max_user_namespaces");
  f.user_namespace = user == 0;
  Note(f.notes, "clone(CLONE_NEWUSER)", user);
  if (f.user_namespace) {
    struct Kind {
      bool KernelFeatures::*field;
      const char* sysctl;
      const char* call;
    };
    static constexpr Kind kKinds[] = {
        {&KernelFeatures::mount_namespace, "max_mnt_namespaces", "unshare(CLONE_NEWNS)"},
        {&KernelFeatures::pid_namespace, "max_pid_namespaces", "unshare(CLONE_NEWPID)"},
        {&KernelFeatures::net_namespace, "max_net_namespaces", "unshare(CLONE_NEWNET)"},
        {&KernelFeatures::ipc_namespace, "max_ipc_namespaces", "unshare(CLONE_NEWIPC)"},
        {&KernelFeatures::uts_namespace, "max_uts_namespaces", "unshare(CLONE_NEWUTS)"},
    };
    for (const Kind& kind : kKinds) {
      int err = NamespaceLimit(kind.sysctl);
      f.*kind.field = err == 0;
      Note(f.notes, kind.call, err);
    }
    f.proc_mount = f.mount_namespace && f.pid_namespace;
    // Inside a container that masks /proc, try the mount rather than assume it (a few ms, only
    // there): otherwise every run would fail at init's proc mount instead of `auto` choosing
    // what works and `doctor`'s fix being named up front.
    // A probe that did not get as far as the mount (no pipe, no child, no id maps: -1 or an
    // error before it) says nothing about /proc: keep the assumption, and the sandbox's init
    // refuses the run if the mount fails there.
    if (f.proc_mount && ProcHasOverMounts()) {
      const NamespaceReport tried = ProbeNamespaces();
      if (tried.user == 0 && tried.mount == 0 && tried.pid == 0 && tried.proc >= 0) {
        f.proc_mount = tried.proc == 0;
        Note(f.notes, "mount(proc) in a new PID namespace under a masked /proc", tried.proc);
      }
    }
  }
  // Whether the call exists (an all-zero attribute set changes nothing even where it works).
  sys::MountAttr attr{};
  f.mount_setattr = sys::MountSetattr(-1, "", 0, &attr) == 0 || errno != ENOSYS;
  ProbeCheapFeatures(f, /*try_seccomp_in_child=*/false);
  return f;
}

KernelFeatures ProbeKernelThoroughly() {
  KernelFeatures f;
  NamespaceReport ns = ProbeNamespaces();
  f.user_namespace = ns.user == 0;
  f.mount_namespace = ns.mount == 0;
  f.pid_namespace = ns.pid == 0;
  f.net_namespace = ns.net == 0;
  f.ipc_namespace = ns.ipc == 0;
  f.uts_namespace = ns.uts == 0;
  f.proc_mount = ns.proc == 0;
  Note(f.notes, "unshare(CLONE_NEWUSER) with own uid/gid map", ns.user);
  if (ns.user == 0) {
    Note(f.notes, "unshare(CLONE_NEWNS)", ns.mount);
    Note(f.notes, "unshare(CLONE_NEWPID)", ns.pid);
    Note(f.notes, "unshare(CLONE_NEWNET)", ns.net);
    Note(f.notes, "unshare(CLONE_NEWIPC)", ns.ipc);
    Note(f.notes, "unshare(CLONE_NEWUTS)", ns.uts);
    if (ns.mount == 0 && ns.pid == 0) Note(f.notes, "mount(proc) in a new PID namespace", ns.proc);
  }

  if (ns.setattr >= 0) {
    f.mount_setattr = ns.setattr == 0;
    Note(f.notes, "mount_setattr(MOUNT_ATTR_RDONLY) in a new mount namespace", ns.setattr);
  } else {
    // No namespace to try it in: only whether the call exists.
    sys::MountAttr attr{};
    f.mount_setattr = sys::MountSetattr(-1, "", 0, &attr) == 0 || errno != ENOSYS;
  }
  ProbeCheapFeatures(f, /*try_seccomp_in_child=*/true);
  return f;
}

}  // namespace cordon::linux_native
