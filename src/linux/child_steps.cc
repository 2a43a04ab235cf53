#include "linux/child_steps.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "exec/init_report.h"
#include "linux/capabilities.h"
#include "linux/error_pipe.h"
#include "linux/landlock_ruleset.h"
#include "linux/loopback.h"
#include "linux/mount_view.h"
#include "linux/no_namespace.h"
#include "linux/resolver_socket.h"
#include "linux/seccomp_filter.h"
#include "linux/system_headers/syscalls.h"
#include "linux/user_namespace.h"

namespace cordon::linux_native {
namespace {

void Require(const ChildContext& c, const StepResult& r) {
  if (r.failed()) ReportAndExit(c.error_fd, r);
}

void Require(const ChildContext& c, bool ok, Step step, int detail = -1) {
  if (!ok) ReportAndExit(c.error_fd, StepFailed(step, detail));
}

// POLLHUP on the alive pipe: the parent, the only holder of its write end, has exited.
bool ParentAlive(int alive_fd) {
  pollfd p{alive_fd, POLLIN, 0};
  int n = ::poll(&p, 1, 0);
  return n == 0 || (n > 0 && (p.revents & POLLHUP) == 0);
}

// `value` (>= 0) in decimal into `out` (room for 16 bytes): no allocation, no locale.
// What the private tmpfs mounts hold already, but cordon's own file: cordon-init reports only
// what the command adds (exec/init_report.h), and subtracts that file itself at the end.
long UsedTmpfsBytes(const ChildContext& c) {
  long total = 0;
  for (const char* path : c.private_tmpfs) {
    struct statfs fs {};
    if (::statfs(path, &fs) != 0 || fs.f_type != TMPFS_MAGIC || fs.f_blocks < fs.f_bfree) continue;
    total += static_cast<long>((fs.f_blocks - fs.f_bfree) * fs.f_bsize);
  }
  struct stat own {};
  if (c.own_file != nullptr && ::lstat(c.own_file, &own) == 0 && S_ISREG(own.st_mode)) {
    total -= static_cast<long>(own.st_blocks) * 512;
  }
  return total < 0 ? 0 : total;
}

void FormatDecimal(char* out, long value) {
  char digits[16];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0 && n < 15);
  for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
  out[n] = '\0';
}

}  // namespace

// Every descriptor above 2 except the error pipe (which closes itself on exec): nothing the
// supervisor holds (config files, sockets, other commands' pipes) reaches the command.
bool CloseOtherFds(int keep, int also_keep) {
  const int kept[] = {keep, also_keep};
  return CloseFdsExcept(kept, 2);
}

bool CloseFdsExcept(const int* keep, int count) {
  // The kept descriptors above 2, sorted (insertion sort: at most a handful, no allocation).
  int sorted[8];
  int n = 0;
  for (int i = 0; i < count && n < 8; ++i) {
    if (keep[i] < 3) continue;
    int j = n++;
    while (j > 0 && sorted[j - 1] > keep[i]) {
      sorted[j] = sorted[j - 1];
      --j;
    }
    sorted[j] = keep[i];
  }
  unsigned next = 3;  // the lowest descriptor not yet dealt with
  for (int i = 0; i < n; ++i) {
    const auto fd = static_cast<unsigned>(sorted[i]);
    if (fd > next && sys::CloseRange(next, fd - 1, 0) != 0) return false;
    if (fd + 1 > next) next = fd + 1;
  }
  return sys::CloseRange(next, ~0U, 0) == 0;
}

// Default dispositions and an empty mask. The supervisor may handle, ignore or block signals:
// handlers must not run in the sandbox's processes, and ignored or blocked signals survive
// execve (`yes | head` never ends with SIGPIPE ignored). The command inherits init's reset.
// Through rt_sigaction itself: glibc's sigaction refuses its two internal signals (32, 33),
// whose handlers would otherwise stay installed in an init that shares the supervisor's memory.
bool ResetSignals() {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    (void)sys::SetDefaultAction(sig);
  }
  sigset_t none;
  ::sigemptyset(&none);
  return ::sigprocmask(SIG_SETMASK, &none, nullptr) == 0;
}

namespace {

// 0, 1, 2 from the caller's descriptors (or /dev/null). Each is first copied above 2, so that
// one dup2 never overwrites a descriptor another still needs.
bool SetUpStdio(const ChildContext& c) {
  int copies[3];
  for (int i = 0; i < 3; ++i) {
    int source = c.stdio[i];
    copies[i] =
        source >= 0 ? ::fcntl(source, F_DUPFD_CLOEXEC, 3) : ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (copies[i] < 0) return false;
    if (copies[i] < 3) {  // /dev/null landed on a free low number
      int moved = ::fcntl(copies[i], F_DUPFD_CLOEXEC, 3);
      ::close(copies[i]);
      if (moved < 0) return false;
      copies[i] = moved;
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (::dup2(copies[i], i) != i) return false;  // dup2 clears close-on-exec on 0..2
  }
  return true;
}

// execvp without allocation: the candidates were resolved against the sandbox's PATH before
// clone. Like execvp, EACCES on one candidate is remembered but the search goes on.
StepResult Exec(const ChildContext& c) {
  char* const* argv = const_cast<char* const*>(c.argv.data());
  char* const* envp = const_cast<char* const*>(c.envp.data());
  int saved = ENOENT;
  for (const char* path : c.exec_paths) {
    ::execve(path, argv, envp);
    if (errno == EACCES) {
      saved = EACCES;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      return StepFailed(Step::kExecve);
    }
  }
  errno = saved;
  return StepFailed(Step::kExecve);
}

// cordon-init --exec REQUEST_FD, through the descriptor held open since the parent.
StepResult ExecStub(const ChildContext& c) {
  if (c.init_reaper_fd < 0) {
    errno = ENOENT;
    return StepFailed(Step::kExecStub);
  }
  char fd_arg[16];
  FormatDecimal(fd_arg, c.request_fd);
  char name[] = "cordon-init";
  char mode[] = "--exec";
  char* const argv[] = {name, mode, fd_arg, nullptr};
  char* const envp[] = {nullptr};
  // The socket was made close-on-exec in the parent; the stub sets that again itself.
  if (::fcntl(c.request_fd, F_SETFD, 0) != 0) return StepFailed(Step::kExecStub);
  (void)sys::ExecveatEmptyPath(c.init_reaper_fd, argv, envp);
  return StepFailed(Step::kExecStub);
}

// The command's body as a CLONE_VM child (glibc's clone calls it on the new stack).
int CommandMain(void* context) { RunCommand(*static_cast<const ChildContext*>(context)); }

}  // namespace

void EnterInit(const ChildContext& c, bool parent_death_signal) {
  // 0. clone copied the supervisor's signal handlers and mask; none of its handlers may ever
  //    run here (a SIGINT to cordon's process group reaches init too, and must kill it).
  Require(c, ResetSignals(), Step::kSignals);
  // 1. Die with the supervisor: if cordon is killed (even SIGKILL), init dies and the kernel
  //    kills everything in its PID namespace. First, so no later step outlives a dead parent.
  //    (The zygote's namespace holder lives longer than the thread that made it, and ends on
  //    its status pipe's POLLERR instead.)
  if (parent_death_signal) {
    Require(c, ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0, Step::kParentDeathSignal);
  }
  // 2. ...unless the parent died before step 1 took effect: then nobody would send the signal.
  Require(c, ParentAlive(c.alive_fd), Step::kParentAlive);
  // 2b. Without a PID namespace: a session and process group of our own (the supervisor kills
  //     the group; nothing in it has the caller's terminal) and the subreaper role, so that
  //     orphaned daemons come to init and die in the sweep after the command.
  if (!c.namespaces.pid) {
    Require(c, ::setsid() >= 0, Step::kSetsid);
    Require(c, ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, Step::kSubreaper);
  }
}

void SetUpNamespaces(const ChildContext& c) {
  // 3. Id maps before anything else in the user namespace: until they exist our ids are
  //    unmapped and mounts, files and sockets would belong to the overflow id.
  if (c.namespaces.user) Require(c, WriteIdMaps(c));
  // The name is cosmetic; the UTS namespace is what keeps the command from changing the outer
  // one. A container runtime's default seccomp profile (podman's, Docker's) refuses
  // sethostname without CAP_SYS_ADMIN even in a namespace of our own: the command then sees the
  // container's name (decision 0061). Any other failure stops the run.
  if (c.namespaces.uts && ::sethostname(c.hostname, std::strlen(c.hostname)) != 0) {
    Require(c, errno == EPERM, Step::kHostname);
  }
  // 4. Loopback while init still holds CAP_NET_ADMIN over the new network namespace.
  if (c.namespaces.net) Require(c, BringUpLoopback());
  if (c.namespaces.net && c.resolver_socket) Require(c, AddIpv4Address());
  // 5. The mount view (needs the maps, and the new PID namespace for its /proc).
  if (c.namespaces.mount) Require(c, BuildMountView(c));
}

void ForkCommandAndWait(const ChildContext& c) {
  // 6. init still holds the caller's full environment (in /proc/1/environ and memory) and
  //    capabilities: make it non-dumpable so the command cannot read or ptrace it. Not when
  //    init runs in the supervisor's memory (decision 0025): the flag belongs to the memory,
  //    so it would make the supervisor non-dumpable, and another thread's init starting in
  //    that memory could no longer write its own id maps (/proc/self of a non-dumpable process
  //    belongs to root). There init holds the memory only until its execve below, and the
  //    command, holding no capabilities, cannot read or trace a process that holds all of
  //    them in its user namespace (the kernel's capability check for ptrace access).
  if (!c.init_shares_parent_memory) {
    Require(c, ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0, Step::kNotDumpable);
  }
  const long baseline = UsedTmpfsBytes(c);
  // 7. The command runs as init's child: init must stay to reap orphans (it is PID 1) and to
  //    report the command's status. Raw clone, not fork(): no atfork handlers or libc locks.
  //    In init's address space on a stack of its own when the parent mapped one: no copy of
  //    the page tables (the supervisor's, until init execs), no copy-on-write faults, and an
  //    execve that tears nothing down. CLONE_VFORK keeps init still until that execve (or the
  //    failed step's _exit), so nothing else touches the shared memory meanwhile.
  pid_t command = -1;
  if (c.command_stack_top != nullptr) {
    command = ::clone(&CommandMain, c.command_stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD,
                      const_cast<ChildContext*>(&c));
  } else {
    command = sys::CloneForkLike(0);
    if (command == 0) RunCommand(c);
  }
  Require(c, command >= 0, Step::kForkCommand);
  // Keep only the status pipe: the command holds the error pipe until its execve (the parent
  // sees EOF only then), and init must not keep the caller's stdio pipes (or any other
  // descriptor of the supervisor) open behind the command's back.
  if (!CloseOtherFds(c.status_fd, c.init_reaper_fd)) ::_exit(126);
  // 8. init's remaining job needs none of the supervisor's memory it still shares (outright,
  //    or copy-on-write holding a copy of it): exec the small reaper, which does the loop below
  //    (decision 0021; the parent passes it only for plans with nothing to clean up on the
  //    host). If that fails, the loop, unless init shares the supervisor's memory.
  if (c.init_reaper_fd >= 0) {
    char status_arg[16];
    char command_arg[16];
    FormatDecimal(status_arg, c.status_fd);
    FormatDecimal(command_arg, command);
    char name[] = "cordon-init";
    // cordon-init STATUS_FD COMMAND_PID [BASELINE OWN_FILE PRIVATE_TMPFS...]
    // (exec/init_report.h).
    char baseline_arg[24];
    FormatDecimal(baseline_arg, baseline);
    char no_file[] = "-";
    char* own = c.own_file != nullptr ? const_cast<char*>(c.own_file) : no_file;
    char* argv[5 + exec::kInitMaxPrivatePaths + 1] = {name, status_arg, command_arg, baseline_arg,
                                                      own};
    std::size_t argc = c.private_tmpfs.empty() ? 3 : 5;
    for (const char* path : c.private_tmpfs) {
      if (argc == 5 + exec::kInitMaxPrivatePaths) break;
      argv[argc++] = const_cast<char*>(path);
    }
    argv[argc] = nullptr;
    char* const envp[] = {nullptr};
    // The status pipe was made close-on-exec for the command's sake; the reaper needs it.
    if (::fcntl(c.status_fd, F_SETFD, 0) == 0) {
      (void)sys::ExecveatEmptyPath(c.init_reaper_fd, argv, envp);
      (void)::fcntl(c.status_fd, F_SETFD, FD_CLOEXEC);
    }
    ::close(c.init_reaper_fd);
  }
  // Reaping in place would keep the supervisor, which waits for this init's execve, stopped
  // for as long as the command runs (and its output pipes full): end the sandbox instead. The
  // supervisor sees init exit without a status and reports that.
  if (c.init_shares_parent_memory) ::_exit(126);
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, 0);
    if (pid == command) {
      // Exiting kills every process still in a PID namespace (double-forked daemons
      // included); without one, init kills and reaps them itself first.
      if (!c.namespaces.pid) KillRemainingChildren();
      (void)!::write(c.status_fd, &status, sizeof status);
      if (c.private_dir != nullptr) RemoveTree(c.private_dir);
      ::_exit(0);
    }
    if (pid < 0 && errno != EINTR) ::_exit(126);  // ECHILD: cannot happen while command lives
  }
}

void RunInit(const ChildContext& c) {
  EnterInit(c);
  SetUpNamespaces(c);
  ForkCommandAndWait(c);
}

void RunCommand(const ChildContext& c) {
  // 0. The run's cgroup first: init forked us outside it, and every process the command starts
  //    must be born inside (its memory and process count are the run's). Before the descriptors
  //    are closed: the cgroup.procs descriptors are the parent's, opened outside the sandbox.
  if (const int err = limits::AttachSelf(c.cgroup); err != 0) {
    errno = err;
    Require(c, false, Step::kCgroupAttach);
  }
  // 1. A new session: no controlling terminal of the caller, so no TIOCSTI into it and no
  //    signals from its job control; also the process group the command's tree lives in.
  //    (Without a PID namespace init made that session, and the command stays in its group.)
  if (c.namespaces.pid) Require(c, ::setsid() >= 0, Step::kSetsid);
  // 2. Descriptors: the caller's stdio on 0..2, then nothing else but the error pipe.
  Require(c, SetUpStdio(c), Step::kStdio);
  // A prepared command also keeps its request socket and cordon-init (step 7).
  const int kept[] = {c.error_fd, c.connect_broker_fd, c.request_fd,
                      c.request_fd >= 0 ? c.init_reaper_fd : -1};
  Require(c, CloseFdsExcept(kept, 4), Step::kCloseFds);
  Require(c, ::chdir(c.cwd) == 0, Step::kChdir);
  // The rlimits before capabilities are dropped and before Landlock/seccomp (lowering a limit
  // needs no privilege, but the filter must not be in the way); inherited by everything after.
  if (const limits::RlimitResult r = limits::ApplyResourceLimits(c.rlimits); !r.ok()) {
    errno = r.err;
    Require(c, false, Step::kRlimit, r.resource);
  }
  // 2b. Network by domain: the resolver's socket on the sandbox's port 53, which needs
  //     CAP_NET_BIND_SERVICE over its network namespace: only now, never for the command.
  if (c.resolver_socket) Require(c, SendResolverSockets(c.connect_broker_fd));
  // 3. Capabilities last among the steps that may need them (none after this do).
  Require(c, DropCapabilities());
  // 4. no_new_privs: execve can never grant privileges again (setuid, file capabilities); it
  //    is also what lets an unprivileged process apply Landlock and seccomp.
  Require(c, ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, Step::kNoNewPrivs);
  // 5. Landlock after the mount view (its rules bind to the inodes the command will see, the
  //    private tmpfs included) and after no_new_privs (required without CAP_SYS_ADMIN).
  Require(c, ApplyLandlock(c));
  // 6. seccomp last: it removes calls (mount, unshare, ...) that earlier steps need.
  //    With brokered connects the listener goes to the supervisor and is closed here.
  if (c.seccomp) Require(c, InstallSeccomp(c.seccomp_program, c.connect_broker_fd));
  // 7. A prepared command (docs/decisions/0023) waits for its command in cordon-init's exec
  //    mode, under every layer above, holding none of the supervisor's memory; the closing of
  //    the error pipe at this execve tells the supervisor it is ready.
  if (c.request_fd >= 0) ReportAndExit(c.error_fd, ExecStub(c));
  ReportAndExit(c.error_fd, Exec(c));
}

}  // namespace cordon::linux_native
