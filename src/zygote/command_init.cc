#include "zygote/command_init.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "linux/child_steps.h"
#include "linux/error_pipe.h"
#include "linux/mount_view.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::zygote {
namespace {

using linux_native::ChildContext;
using linux_native::ReportAndExit;
using linux_native::Step;
using linux_native::StepFailed;

// open_tree(2) and move_mount(2) (Linux 5.2; not in Debian 12's headers). Numbers from the
// unified syscall table, the same on x86_64 and aarch64.
constexpr long kNrOpenTree = 428;
constexpr long kNrMoveMount = 429;
constexpr unsigned kOpenTreeClone = 1;
constexpr unsigned kAtRecursive = 0x8000;
constexpr unsigned kMoveMountFEmptyPath = 0x00000004;

int CloneTree(const char* path) {
  return static_cast<int>(
      ::syscall(kNrOpenTree, AT_FDCWD, path, kOpenTreeClone | kAtRecursive | O_CLOEXEC));
}

int AttachTree(int tree, const char* target) {
  return static_cast<int>(
      ::syscall(kNrMoveMount, tree, "", AT_FDCWD, target, kMoveMountFEmptyPath));
}

void Require(const ChildContext& c, bool ok, Step step, int detail = -1) {
  if (!ok) ReportAndExit(c.error_fd, StepFailed(step, detail));
}

using linux_native::MakeDirectories;

// A mount point shaped like the cloned tree's root: a directory, or an empty file.
int MakeMountPoint(const char* path, int tree_fd) {
  struct stat st;
  if (::fstat(tree_fd, &st) != 0) return -1;
  if (S_ISDIR(st.st_mode)) return MakeDirectories(path, std::strlen(path));
  const char* slash = std::strrchr(path, '/');
  if (slash != nullptr && slash != path &&
      MakeDirectories(path, static_cast<std::size_t>(slash - path)) != 0) {
    return -1;
  }
  int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  ::close(fd);
  return 0;
}

// The plan's tmpfs replay with fresh filesystems (see command_mounts.h), then a fresh
// /dev/shm. Runs in the command's own mount namespace: the session's view is untouched.
void ReplayCommandMounts(const ChildContext& c, const JoinSpec& spec) {
  int trees[kMaxClonedTrees];
  for (std::size_t i = 0; i < spec.mounts.size(); ++i) {
    const CommandMount& m = spec.mounts[i];
    const int detail = static_cast<int>(i);
    const char* path = m.path.c_str();
    switch (m.kind) {
      case CommandMountKind::kCloneTree:
        trees[m.slot] = CloneTree(path);
        if (trees[m.slot] < 0 && errno == ENOENT && m.optional) break;  // as the view skipped it
        Require(c, trees[m.slot] >= 0, Step::kCommandMount, detail);
        break;
      case CommandMountKind::kTmpfs:
        // Same flags and mode as the session's (mount_view.cc ReplayOp kTmpfs).
        Require(c, ::mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0,
                Step::kCommandMount, detail);
        break;
      case CommandMountKind::kDirectory:
        Require(c, ::mkdir(path, 0700) == 0 || errno == EEXIST, Step::kCommandMount, detail);
        break;
      case CommandMountKind::kAttach:
        if (trees[m.slot] < 0) break;  // an optional tree that was not there
        Require(c, MakeMountPoint(path, trees[m.slot]) == 0, Step::kCommandMount, detail);
        Require(c, AttachTree(trees[m.slot], path) == 0, Step::kCommandMount, detail);
        ::close(trees[m.slot]);
        break;
    }
  }
  // POSIX shared memory of earlier commands stays in the session's /dev/shm, out of sight.
  Require(c, ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0,
          Step::kDevShm);
}

// A /proc of the command's own PID namespace over the session's, with the same read-only
// kernel knobs as the one-shot view (mount_view.cc MountProc).
void MountCommandProc(const ChildContext& c) {
  Require(c, ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0,
          Step::kProc);
  for (std::size_t i = 0; i < linux_native::kProcReadOnlyPaths.size(); ++i) {
    const char* path = linux_native::kProcReadOnlyPaths[i] + std::strlen(linux_native::kNewRoot);
    if (::access(path, F_OK) != 0) continue;  // not on this kernel
    const bool ok = ::mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
                    linux_native::SetMountAttr(path,
                                               linux_native::sys::kMountAttrRdonly |
                                                   linux_native::sys::kMountAttrNosuid |
                                                   linux_native::sys::kMountAttrNodev |
                                                   linux_native::sys::kMountAttrNoexec,
                                               true) == 0;
    Require(c, ok, Step::kProcReadOnly, static_cast<int>(i));
  }
}

[[noreturn]] void RunCommandInit(const ChildContext& c, const JoinSpec& spec) {
  // Steps 0-2 of the one-shot init: default signals, die with the supervising thread (our
  // parent through CLONE_PARENT; its death or the supervisor's SIGKILL takes this PID
  // namespace, the command's tree, down), unless it is already gone.
  linux_native::EnterInit(c);
  ReplayCommandMounts(c, spec);
  if (const linux_native::StepResult r =
          linux_native::CoverPlaceholders(spec.covers, spec.ignore_path, spec.ignore_text);
      r.failed()) {
    ReportAndExit(c.error_fd, r);
  }
  MountCommandProc(c);
  linux_native::ForkCommandAndWait(c);
}

struct CommandInitArgs {
  const ChildContext* context;
  const JoinSpec* spec;
};

int CommandInitMain(void* arg) {
  const auto* args = static_cast<const CommandInitArgs*>(arg);
  RunCommandInit(*args->context, *args->spec);
}

// The command's init, our child's sibling (CLONE_PARENT: the supervisor's child). In our
// memory (the supervisor's) until it execs cordon-init when the launch gave it a stack, as a
// one-shot init (launcher.cc CloneInitSharingMemory): no copy of the supervisor's page tables,
// and none of its threads' pages write-protected for copy-on-write, each fault then flushing
// the other CPUs' TLBs. Every signal blocked across the clone, glibc's internal ones too: until
// init has reset its dispositions (step 0), a handler of the supervisor's would run in init on
// the shared memory.
pid_t CloneCommandInit(const ChildContext& c, const JoinSpec& spec) {
  if (!c.init_shares_parent_memory || c.init_stack_top == nullptr) {
    const pid_t init = linux_native::sys::CloneForkLike(CLONE_PARENT, spec.init_pid);
    if (init == 0) RunCommandInit(c, spec);
    return init;
  }
  sigset_t previous;
  if (linux_native::sys::BlockEverySignal(&previous) != 0) return -1;
  CommandInitArgs args{&c, &spec};
  // The kernel stores init's pid where the supervisor reads it before clone returns here: a
  // relay killed while it waits for init's exec still leaves the supervisor init's pid, to
  // kill and reap before it unmaps the stack init runs on.
  const pid_t init = ::clone(&CommandInitMain, c.init_stack_top,
                             CLONE_PARENT | CLONE_PARENT_SETTID | CLONE_VM | CLONE_VFORK | SIGCHLD,
                             &args, spec.init_pid);
  const int clone_errno = errno;
  (void)linux_native::sys::RestoreSignalMask(previous);
  errno = clone_errno;
  return init;
}

}  // namespace

namespace {

// The holder's life once its namespaces are set up: it only waits.
[[noreturn]] void HoldUntilReleased(const ChildContext& c) {
  // Stays dumpable: setns() through its pidfd needs ptrace read access to it, which an
  // unprivileged caller lacks to a non-dumpable process. No command can reach it: it lives in
  // a PID namespace no command is in (they cannot name it), and commands hold no capabilities.
  // Ready: closing the error pipe is the parent's EOF-without-report.
  if (!linux_native::CloseOtherFds(c.status_fd)) ::_exit(126);
  for (;;) {
    pollfd p{c.status_fd, 0, 0};
    if (::poll(&p, 1, -1) > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) ::_exit(0);
  }
}

}  // namespace

void RunHolder(const ChildContext& c, const void* /*extra*/) {
  // No parent-death signal: that follows the *thread* that cloned us, and the session outlives
  // the call that started it. The holder ends on POLLERR of its status pipe instead, which
  // the kernel raises when the last reader (the Zygote, or the dead server) is gone.
  linux_native::EnterInit(c, /*parent_death_signal=*/false);
  linux_native::SetUpNamespaces(c);
  HoldUntilReleased(c);
}

void RunRejoiningHolder(const ChildContext& c, const void* extra) {
  // A CLONE_VM relay, like the joiner: raw system calls only.
  const RejoinSpec& spec = *static_cast<const RejoinSpec*>(extra);
  // The previous holder's user namespace first (its id maps are ours), then its network
  // namespace (loopback already up, and whatever listens there) and UTS namespace.
  Require(c, ::setns(spec.anchor_pidfd, spec.setns_flags) == 0, Step::kJoinNamespaces);
  // A mount namespace copied from the host's (not the previous view), a PID namespace and
  // SysV IPC of its own.
  Require(c, ::unshare(spec.unshare_flags) == 0, Step::kUnshareCommand);
  pid_t holder = linux_native::sys::CloneForkLike(CLONE_PARENT, spec.holder_pid);
  Require(c, holder >= 0, Step::kForkInit);
  if (holder == 0) {
    linux_native::EnterInit(c, /*parent_death_signal=*/false);
    if (const linux_native::StepResult r = linux_native::BuildMountView(c); r.failed()) {
      ReportAndExit(c.error_fd, r);
    }
    HoldUntilReleased(c);
  }
  *spec.holder_pid = holder;
  ::_exit(0);
}

void RunJoiner(const ChildContext& c, const void* extra) {
  // A CLONE_VM relay: raw system calls only, nothing that allocates or locks.
  const JoinSpec& spec = *static_cast<const JoinSpec*>(extra);
  // The session's namespaces: the user namespace first (setns orders them), which gives this
  // process the capabilities the rest needs there.
  Require(c, ::setns(spec.holder_pidfd, spec.setns_flags) == 0, Step::kJoinNamespaces);
  // The command's own: a copy of the mount view it may change, its own PID namespace (its
  // tree dies as a whole) and its own SysV IPC (whose objects would outlive it).
  Require(c, ::unshare(spec.unshare_flags) == 0, Step::kUnshareCommand);
  const pid_t init = CloneCommandInit(c, spec);
  Require(c, init >= 0, Step::kForkInit);
  *spec.init_pid = init;
  // Opened from in here, where it is always allowed (our own /proc entry): the supervisor,
  // unprivileged, may not open it through init's entry while a fork-like init is non-dumpable
  // (from its step 6 until it execs cordon-init). The supervisor's /proc names us; the
  // session's would not (we are not in its PID namespace).
  if (spec.proc_fd >= 0) {
    *spec.mount_ns_fd = ::openat(spec.proc_fd, "self/ns/mnt", O_RDONLY | O_CLOEXEC);
  }
  ::_exit(0);
}

}  // namespace cordon::zygote
