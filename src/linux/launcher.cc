// Parent half of the native backend: prepares the child context, creates the pipes, clones the
// sandbox's init and waits until the command's execve succeeded or a step failed.
#include "linux/launcher.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "core/fd_passing.h"
#include "core/syscall_error.h"
#include "linux/child_context.h"
#include "linux/child_stacks.h"
#include "linux/child_steps.h"
#include "linux/error_pipe.h"
#include "linux/mount_view.h"
#include "linux/no_namespace.h"
#include "linux/resolver_program.h"
#include "linux/system_headers/landlock.h"
#include "linux/system_headers/syscalls.h"
#include "plan/host_run_paths.h"

namespace cordon::linux_native {
namespace {

using core::UniqueFd;

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Close-on-exec pipe whose ends are >= 3, so the child's dup2 onto 0..2 never hits them.
Result<Pipe> MakePipe(const char* what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", what);
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (UniqueFd* end : {&p.read, &p.write}) {
    if (end->get() >= 3) continue;
    int moved = ::fcntl(end->get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return core::FailSyscall("fcntl", fmt::format("{}, F_DUPFD_CLOEXEC", what));
    end->Reset(moved);
  }
  return p;
}

std::string CloneFlagNames(unsigned long flags) {
  std::string names;
  auto add = [&](unsigned long flag, const char* name) {
    if ((flags & flag) == 0) return;
    if (!names.empty()) names += '|';
    names += name;
  };
  add(CLONE_NEWUSER, "CLONE_NEWUSER");
  add(CLONE_NEWNS, "CLONE_NEWNS");
  add(CLONE_NEWPID, "CLONE_NEWPID");
  add(CLONE_NEWNET, "CLONE_NEWNET");
  add(CLONE_NEWIPC, "CLONE_NEWIPC");
  add(CLONE_NEWUTS, "CLONE_NEWUTS");
  return names.empty() ? "0" : names;
}

// The step label and the call, e.g. {"bind_writable", "mount(/work/ws, MS_BIND|MS_REC)"}.
std::pair<const char*, std::string> DescribeMountOp(const plan::MountOp& op) {
  const std::string path = op.path.string();
  switch (op.kind) {
    case plan::MountOpKind::kBindWritable:
      return {"bind_writable", fmt::format("mount({}, MS_BIND|MS_REC)", path)};
    case plan::MountOpKind::kBindReadOnly:
      return {"bind_read_only",
              fmt::format("mount({0}, MS_BIND|MS_REC) + mount_setattr({0}, RDONLY)", path)};
    case plan::MountOpKind::kTmpfs:
      return {"private_tmpfs", fmt::format("mount(tmpfs, {})", path)};
    case plan::MountOpKind::kDirectory:
      return {"private_directory", fmt::format("mkdir({})", path)};
    case plan::MountOpKind::kMaskDirectory:
      return {"mask_directory", fmt::format("mount(tmpfs, {}, MS_RDONLY)", path)};
    case plan::MountOpKind::kHomeView:
      return {"home_view", fmt::format("mount(tmpfs, {}) + mount_setattr(RDONLY)", path)};
    case plan::MountOpKind::kMaskFile:
      return {"mask_file",
              fmt::format("mount(/dev/null, {0}, MS_BIND) + mount_setattr({0}, RDONLY)", path)};
    case plan::MountOpKind::kResolverConfig:
      return {"resolver_config",
              fmt::format("mount(cordon's resolv.conf, {0}, MS_BIND) + mount_setattr({0}, RDONLY)",
                          path)};
  }
  return {"mount_op", path};
}

// The failed call with its arguments, for the message ("mount(/work/ws, MS_BIND|MS_REC)").
std::string DescribeCall(const plan::LaunchPlan& plan, const ChildContext& c, const StepReport& r) {
  auto at = [](const auto& list, int i) -> const auto* {
    return i >= 0 && static_cast<std::size_t>(i) < list.size() ? &list[i] : nullptr;
  };
  // if-chain, not switch: only a few steps carry detail worth naming.
  if (r.step == Step::kMountOp || r.step == Step::kMountPoint) {
    if (const auto* op = at(plan.mounts, r.detail)) {
      return r.step == Step::kMountPoint
                 ? fmt::format("mkdir -p({}) for a mount point", op->path.string())
                 : DescribeMountOp(*op).second;
    }
  } else if (r.step == Step::kPlaceholderCover) {
    const std::vector<plan::PlaceholderCover> covers = plan::PlaceholderCovers(plan.placeholders);
    if (const auto* p = at(covers, r.detail); p != nullptr && p->pin) {
      return fmt::format(
          "pin of {}, a directory on the way to a placeholder (so that it cannot be renamed "
          "and made again)",
          p->path.string());
    } else if (p != nullptr) {
      return fmt::format(
          "cover of the placeholder {} ({}), which keeps a host-run file from "
          "being created",
          p->path.string(), p->directory ? "a directory" : "a link");
    }
    return fmt::format(
        "writing git's ignore file for the placeholders in the private HOME "
        "({})",
        (plan.home / plan::kPlaceholderGitIgnore).string());
  } else if (r.step == Step::kProcReadOnly) {
    if (const auto* p = at(kProcReadOnlyPaths, r.detail)) {
      return fmt::format("mount(MS_BIND) + mount_setattr(RDONLY)({})", *p + 8);
    }
  } else if (r.step == Step::kDevNode) {
    if (const auto* n = at(kDevNodes, r.detail)) {
      return fmt::format("mount(/dev/{}, MS_BIND)", *n);
    }
  } else if (r.step == Step::kLandlockRule) {
    if (const auto* p = at(c.landlock_writable, r.detail)) {
      return fmt::format("landlock_add_rule({})", *p);
    }
  } else if (r.step == Step::kRlimit) {
    return fmt::format("setrlimit({})", limits::RlimitName(r.detail));
  } else if (r.step == Step::kCgroupAttach) {
    return "write(cgroup.procs of the run's cgroup, \"0\")";
  } else if (r.step == Step::kExecve) {
    return fmt::format("execve({})", plan.argv.front());
  } else if (r.step == Step::kChdir) {
    return fmt::format("chdir({})", plan.cwd.string());
  }
  return StepName(r.step);
}

Error ReportError(const plan::LaunchPlan& plan, const ChildContext& c, const StepReport& r) {
  ErrorCode code =
      r.step == Step::kExecve && (r.err == ENOENT || r.err == ENOTDIR || r.err == EACCES)
          ? ErrorCode::kCommandNotFound
          : ErrorCode::kSystem;
  const char* step = StepName(r.step);
  if (r.step == Step::kMountOp && r.detail >= 0 &&
      static_cast<std::size_t>(r.detail) < plan.mounts.size()) {
    step = DescribeMountOp(plan.mounts[static_cast<std::size_t>(r.detail)]).first;
  }
  return Error{code, r.err,
               fmt::format("native sandbox: step {}: {}: {}", step, DescribeCall(plan, c, r),
                           std::strerror(r.err))};
}

// Removes the fallback's private directory unless ownership passed to the sandbox's init.
struct PrivateDir {
  std::string path;
  PrivateDir() = default;
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  ~PrivateDir() {
    if (!path.empty()) RemoveTree(path.c_str());
  }
};

// Points HOME and TMPDIR at the host directory and lets Landlock allow writes beneath it.
void UsePrivateDir(ChildContext& c, const std::string& dir) {
  c.private_dir = c.Keep(dir);
  for (const char*& entry : c.envp) {
    if (entry == nullptr) continue;
    if (std::strncmp(entry, "HOME=", 5) == 0) entry = c.Keep("HOME=" + dir + "/home");
    if (std::strncmp(entry, "TMPDIR=", 7) == 0) entry = c.Keep("TMPDIR=" + dir + "/tmp");
  }
  c.landlock_writable.push_back(c.private_dir);
}

struct RelayArgs {
  const ChildContext* context;
  const InitEntry* entry;
};

int RelayMain(void* arg) {
  const auto* args = static_cast<const RelayArgs*>(arg);
  args->entry->run(*args->context, args->entry->extra);
  return 127;  // run must _exit itself
}

// Runs entry.run as a CLONE_VM|CLONE_FILES|CLONE_VFORK child on `stack_top` and returns the
// pid it stored: the process it created with CLONE_PARENT, our child. The relay itself has
// exited when clone returns. Every signal is blocked across it: a handler of the supervisor's
// would run in the relay on the shared memory (the process it creates resets them).
Result<pid_t> RunRelay(const ChildContext& context, const InitEntry& entry, char* stack_top) {
  *entry.relay_pid = -1;
  RelayArgs args{&context, &entry};
  sigset_t previous;
  if (sys::BlockEverySignal(&previous) != 0) {
    return core::FailSyscall("rt_sigprocmask", "SIG_SETMASK, every signal");
  }
  const pid_t relay =
      ::clone(&RelayMain, stack_top, CLONE_VM | CLONE_FILES | CLONE_VFORK | SIGCHLD, &args);
  const int clone_errno = errno;
  (void)sys::RestoreSignalMask(previous);
  if (relay < 0) {
    return core::FailSyscall("clone", "CLONE_VM|CLONE_FILES|CLONE_VFORK", clone_errno);
  }
  int status = 0;
  while (::waitpid(relay, &status, 0) < 0 && errno == EINTR) {
  }
  // A relay that failed before creating the process reported on the error pipe (or exited
  // 127 without a report): -1 here, and ReadReport below says why.
  return *entry.relay_pid;
}

int InitMain(void* context) { RunInit(*static_cast<const ChildContext*>(context)); }

// The sandbox's init as a CLONE_VM|CLONE_VFORK child on a stack of its own: no copy of the
// supervisor's page tables, no copy-on-write faults on either side, and the execve of
// cordon-init tears nothing down. The calling thread waits until that execve (or init's exit
// on a failed step), so nothing of it touches the shared memory meanwhile; its other threads
// run on, which is why init, like every child here, makes raw system calls only. Every signal
// is blocked across the clone: until init has reset its dispositions (step 0), a handler of
// the supervisor's would run in init on the shared memory.
Result<pid_t> CloneInitSharingMemory(ChildContext& context, char* stack_top,
                                     unsigned long clone_flags) {
  context.init_shares_parent_memory = true;
  sigset_t previous;
  if (sys::BlockEverySignal(&previous) != 0) {
    return core::FailSyscall("rt_sigprocmask", "SIG_SETMASK, every signal");
  }
  const pid_t pid =
      ::clone(&InitMain, stack_top, clone_flags | CLONE_VM | CLONE_VFORK | SIGCHLD, &context);
  const int clone_errno = errno;
  (void)sys::RestoreSignalMask(previous);
  if (pid < 0) {
    return core::FailSyscall("clone", CloneFlagNames(clone_flags) + "|CLONE_VM|CLONE_VFORK",
                             clone_errno);
  }
  return pid;
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan, const exec::StdioFds& stdio,
                                     const limits::CgroupAttach& cgroup) {
  InitEntry entry;
  entry.cgroup = cgroup;
  return LaunchWithEntry(plan, stdio, entry);
}

Result<exec::LaunchedProcess> LaunchWithEntry(const plan::LaunchPlan& plan,
                                              const exec::StdioFds& stdio, const InitEntry& entry) {
  if (!plan.sandboxed) {
    return Fail(ErrorCode::kInvalidArgument, "native sandbox: plan is not sandboxed (mode off)");
  }
  const bool namespaced = plan.namespaces.user && plan.namespaces.mount && plan.namespaces.pid;
  if (!namespaced && (plan.landlock.abi < 1 || !plan.seccomp.enabled)) {
    return Fail(ErrorCode::kUnavailable,
                "native sandbox: a plan without namespaces needs Landlock and seccomp");
  }
  // Network by domain is answered by cordon-resolver: without it the run is refused here,
  // before anything of it runs.
  int resolver_program = -1;
  if (plan.domains) {
    CORDON_TRY(resolver_program, ResolverProgramFor(plan));
  }
  std::unique_ptr<ChildContext> context;
  if (entry.seccomp_program != nullptr && plan.seccomp.enabled) {
    plan::LaunchPlan without_filter = plan;  // the same plan, its filter already compiled
    without_filter.seccomp.enabled = false;
    CORDON_TRY(context, PrepareChildContext(without_filter, stdio));
    context->seccomp = true;
    context->seccomp_program = *entry.seccomp_program;
  } else {
    CORDON_TRY(context, PrepareChildContext(plan, stdio));
  }
  PrivateDir private_dir;
  if (!namespaced) {
    CORDON_TRY(private_dir.path, CreatePrivateDir());
    UsePrivateDir(*context, private_dir.path);
  }
  CORDON_TRY(Pipe error_pipe, MakePipe("sandbox error pipe"));
  CORDON_TRY(Pipe alive_pipe, MakePipe("sandbox alive pipe"));
  CORDON_TRY(Pipe status_pipe, MakePipe("sandbox status pipe"));
  context->cgroup = entry.cgroup;
  context->request_fd = entry.request_fd;
  context->view_reused = entry.view_reused;
  context->error_fd = error_pipe.write.get();
  context->alive_fd = alive_pipe.read.get();
  context->status_fd = status_pipe.write.get();
  BrokerChannel broker;
  if (plan.seccomp.enabled && plan.seccomp.broker_connect) {
    CORDON_TRY(broker, MakeBrokerChannel());
    context->connect_broker_fd = broker.child.get();
    context->resolver_socket = plan.domains.has_value();
  }

  CORDON_TRY(ChildStacks stacks, ChildStacks::Map());
  context->command_stack_top = stacks.command_top();

  const unsigned long clone_flags = entry.run != nullptr ? entry.clone_flags : context->clone_flags;
  pid_t pid = -1;
  if (entry.relay) {
    // On a stack of its own, with its guard page: an overflow faults rather than writing over
    // our heap. Its init, made in our memory when it can exec cordon-init, runs on init's.
    if (entry.relay_init_shares_memory && context->init_reaper_fd >= 0) {
      context->init_shares_parent_memory = true;
      context->init_stack_top = stacks.init_top();
    }
    CORDON_TRY(pid, RunRelay(*context, entry, stacks.relay_top()));
  } else if (entry.run == nullptr && context->init_reaper_fd >= 0) {
    // init execs cordon-init once the command runs: it may share our memory until then.
    CORDON_TRY(pid, CloneInitSharingMemory(*context, stacks.init_top(), clone_flags));
  } else {
    pid = sys::CloneForkLike(clone_flags);
    if (pid < 0) return core::FailSyscall("clone", CloneFlagNames(clone_flags));
    if (pid == 0) {
      if (entry.run == nullptr) RunInit(*context);  // never returns
      entry.run(*context, entry.extra);
      ::_exit(127);
    }
  }

  // The child's ends: closing them here is what lets EOF mean "the child is done with them".
  error_pipe.write.Reset();
  alive_pipe.read.Reset();
  status_pipe.write.Reset();
  broker.child.Reset();

  auto report = ReadReport(error_pipe.read.get());
  // Only now may the child see POLLHUP on the alive pipe: it has long passed its check.
  alive_pipe.write.Reset();
  if (!report) {
    KillAndReap(pid);
    return std::unexpected(std::move(report).error());
  }
  if (report->has_value()) {
    KillAndReap(pid);
    return std::unexpected(ReportError(plan, *context, **report));
  }

  UniqueFd pidfd(sys::PidfdOpen(pid, 0));
  if (!pidfd) {
    Error error = core::SyscallError("pidfd_open", std::to_string(pid));
    KillAndReap(pid);
    return std::unexpected(std::move(error));
  }
  private_dir.path.clear();  // init owns it now and removes it after the command
  exec::LaunchedProcess launched;
  launched.pid = pid;
  // Without a PID namespace, killing init alone would leave the command running: the
  // supervisor kills init's process group (the command and its non-setsid descendants).
  launched.kill_process_group = !namespaced;
  launched.pidfd = std::move(pidfd);
  launched.status_fd = std::move(status_pipe.read);
  if (broker.ours) {
    if (plan.domains) {
      // Sent before the listener; without them nothing would answer the sandbox's lookups.
      Result<UniqueFd> datagram = core::ReceiveFd(broker.ours.get(), MSG_DONTWAIT);
      Result<UniqueFd> stream = datagram ? core::ReceiveFd(broker.ours.get(), MSG_DONTWAIT)
                                         : std::unexpected(datagram.error());
      Result<UniqueFd> proxy = stream ? core::ReceiveFd(broker.ours.get(), MSG_DONTWAIT)
                                      : std::unexpected(stream.error());
      if (!proxy) {
        KillAndReap(pid);
        return Fail(ErrorCode::kSystem,
                    fmt::format("network by domain: the sandbox's resolver and proxy sockets did "
                                "not arrive from the command's process ({})",
                                proxy.error().message));
      }
      launched.resolver.datagram = *std::move(datagram);
      launched.resolver.stream = *std::move(stream);
      launched.resolver.proxy = *std::move(proxy);
      launched.resolver.program = resolver_program;
    }
    launched.connect_listener = ReceiveListener(broker.ours.get());
    launched.connect_rules = BrokerRules(plan, context->private_dir);
  }
  return launched;
}

Error StepError(const plan::LaunchPlan& plan, const StepReport& report) {
  const ChildContext none;  // only a Landlock rule's detail is looked up in it
  return ReportError(plan, none, report);
}

Result<BrokerChannel> MakeSocketPair(int type, const char* what) {
  int fds[2];
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0) {
    return core::FailSyscall("socketpair", fmt::format("AF_UNIX ({})", what));
  }
  BrokerChannel channel{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (UniqueFd* end : {&channel.ours, &channel.child}) {
    if (end->get() >= 3) continue;  // above 2, like the pipes
    int moved = ::fcntl(end->get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) return core::FailSyscall("fcntl", fmt::format("{}, F_DUPFD_CLOEXEC", what));
    end->Reset(moved);
  }
  return channel;
}

Result<BrokerChannel> MakeBrokerChannel() {
  return MakeSocketPair(SOCK_SEQPACKET, "connect broker");
}

UniqueFd ReceiveListener(int fd) {
  Result<UniqueFd> listener = core::ReceiveFd(fd, MSG_DONTWAIT);
  return listener ? std::move(*listener) : UniqueFd();
}

exec::ConnectRules BrokerRules(const plan::LaunchPlan& plan, const char* private_dir) {
  exec::ConnectRules rules;
  for (const auto& path : plan.unix_connect_beneath) rules.unix_beneath.push_back(path.string());
  // The fallback's private HOME and TMPDIR are the command's own scratch space.
  if (private_dir != nullptr) rules.unix_beneath.emplace_back(private_dir);
  rules.private_network = plan.namespaces.net;
  rules.abstract_scoped = (plan.landlock.scoped & sys::kScopeAbstractUnixSocket) != 0;
  rules.refuse_tcp = (plan.landlock.handled_net & sys::kAccessNetConnectTcp) != 0;
  rules.writes.observe = plan.seccomp.observe_writes;
  for (const plan::MountOp& op : plan.mounts) {
    switch (op.kind) {
      case plan::MountOpKind::kTmpfs:
      case plan::MountOpKind::kHomeView:
      case plan::MountOpKind::kMaskDirectory:
      case plan::MountOpKind::kMaskFile:
        rules.hidden_areas.push_back(op.path.string());
        break;
      case plan::MountOpKind::kBindWritable:
      case plan::MountOpKind::kBindReadOnly:
      case plan::MountOpKind::kDirectory:
      case plan::MountOpKind::kResolverConfig:
        break;
    }
  }
  rules.domains = plan.domains;
  rules.parent = plan.parent_proxy;
  for (const plan::Placeholder& p : plan.placeholders)
    rules.writes.held.push_back(p.path().string());
  if (plan.landlock.abi >= 1) {
    rules.writes.landlock_abi = plan.landlock.abi;
    for (const auto& path : plan.landlock.writable) {
      rules.writes.landlock_writable.push_back(path.string());
    }
    if (private_dir != nullptr) rules.writes.landlock_writable.emplace_back(private_dir);
  }
  return rules;
}

}  // namespace cordon::linux_native
