#include "zygote/zygote.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cerrno>

#include "exec/process_control.h"
#include "linux/init_reaper.h"
#include "linux/launcher.h"
#include "linux/seccomp_filter.h"
#include "plan/host_run_paths.h"
#include "plan/shape.h"
#include "zygote/command_init.h"
#include "zygote/mount_ids.h"
#include "zygote/namespace_hold.h"

namespace cordon::zygote {
Result<std::unique_ptr<Zygote>> Zygote::Start(const plan::LaunchPlan& plan,
                                              const Zygote* previous) {
  const plan::Namespaces& ns = plan.namespaces;
  if (!plan.sandboxed || !ns.user || !ns.mount || !ns.pid) {
    return Fail(ErrorCode::kUnavailable, "zygote: the plan has no user, mount and PID namespaces");
  }
  std::optional<std::vector<CommandMount>> mounts = PlanCommandMounts(plan.mounts);
  if (!mounts) {
    return Fail(ErrorCode::kUnavailable,
                "zygote: the plan's mounts beneath a private tmpfs cannot be replayed per command");
  }
  std::unique_ptr<Zygote> z(new Zygote());
  z->shape_ = plan;
  z->shape_.placeholders.clear();  // each command's own (Join covers them)
  z->mounts_ = std::move(*mounts);
  if (plan.seccomp.enabled) {
    CORDON_TRY(z->seccomp_program_, linux_native::BuildSeccompProgram(plan.seccomp));
  }
  // The holder's stdio is /dev/null (-1): it never prints.
  linux_native::InitEntry entry;
  entry.run = &RunHolder;
  entry.view_reused = true;
  unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
  if (ns.net) flags |= CLONE_NEWNET;
  if (ns.ipc) flags |= CLONE_NEWIPC;
  if (ns.uts) flags |= CLONE_NEWUTS;
  entry.clone_flags = flags;
  Result<exec::LaunchedProcess> holder = std::unexpected(Error{});
  if (previous != nullptr && previous->SharesNetworkWith(plan)) {
    RejoinSpec rejoin;
    pid_t rejoined_pid = -1;
    rejoin.anchor_pidfd = previous->holder_.pidfd.get();
    rejoin.setns_flags = CLONE_NEWUSER | CLONE_NEWNET;
    if (ns.uts) rejoin.setns_flags |= CLONE_NEWUTS;
    rejoin.unshare_flags = CLONE_NEWNS | CLONE_NEWPID;
    if (ns.ipc) rejoin.unshare_flags |= CLONE_NEWIPC;
    rejoin.holder_pid = &rejoined_pid;
    linux_native::InitEntry rejoining = entry;
    rejoining.run = &RunRejoiningHolder;
    rejoining.extra = &rejoin;
    rejoining.relay = true;
    rejoining.relay_pid = &rejoined_pid;
    holder = linux_native::LaunchWithEntry(z->shape_, exec::StdioFds{}, rejoining);
  }
  // First, or the previous holder died meanwhile: namespaces of its own (a loopback of its own).
  if (!holder) holder = linux_native::LaunchWithEntry(z->shape_, exec::StdioFds{}, entry);
  if (!holder) return std::unexpected(std::move(holder).error());
  z->holder_ = *std::move(holder);
  // Where each joiner finds its own mount namespace (namespace_hold.h); without it, commands
  // run as well, their namespaces just not held.
  z->proc_.Reset(::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC));
  // The view as built: a mount of it gone later means a mask was detached (Intact). Without
  // its list no command may rely on this view (fail closed: the session then runs one-shot).
  std::optional<std::vector<std::uint64_t>> listed =
      z->proc_ ? MountIds(z->proc_.get(), z->holder_.pid) : std::nullopt;
  if (!listed) {
    return Fail(ErrorCode::kSystem, "zygote: cannot list the mounts of its view in /proc");
  }
  z->view_mounts_ = *std::move(listed);
  return z;
}

bool Zygote::Intact() const {
  const std::optional<std::vector<std::uint64_t>> now = MountIds(proc_.get(), holder_.pid);
  return now && StillMounted(view_mounts_, *now);
}

Zygote::~Zygote() {
  if (holder_.pid <= 0) return;
  holder_.status_fd.Reset();  // the holder's POLLERR: it exits by itself
  exec::KillTree(holder_);
  (void)exec::Reap(holder_);
}

bool Zygote::SharesNetworkWith(const plan::LaunchPlan& plan) const {
  // The same namespaces (so a network namespace on both sides) and hostname; the id maps are
  // this process's own either way.
  return plan.namespaces.net && shape_.namespaces == plan.namespaces &&
         shape_.hostname == plan.hostname && Alive();
}

bool Zygote::Fits(const plan::LaunchPlan& plan) const {
  return plan::SameSandboxShape(shape_, plan);
}

bool Zygote::Alive() const {
  if (!holder_.pidfd.valid()) return false;
  pollfd p{holder_.pidfd.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // a pidfd polls readable once the process has exited
}

Result<exec::LaunchedProcess> Zygote::Launch(const plan::LaunchPlan& plan,
                                             const exec::StdioFds& stdio,
                                             const limits::CgroupAttach& cgroup) const {
  return Join(plan, stdio, cgroup, -1);
}

Result<std::unique_ptr<PreparedCommand>> Zygote::Prepare(const plan::LaunchPlan& plan) const {
  if (!Preparable(plan)) {
    return Fail(ErrorCode::kUnavailable,
                "zygote: a run with its own cgroup or an open-files limit is not prepared");
  }
  if (linux_native::InitReaperFdFor(plan) < 0) {
    return Fail(ErrorCode::kUnavailable, "zygote: no usable cordon-init to prepare commands with");
  }
  CORDON_TRY(linux_native::BrokerChannel request,
             linux_native::MakeSocketPair(SOCK_STREAM, "prepared command"));
  // Prepared in the workspace, which exists as long as the session does; each command then
  // changes to its own directory.
  plan::LaunchPlan shape = plan;
  shape.cwd = plan.workspace;
  shape.placeholders.clear();  // each command's own, covered when it comes
  core::UniqueFd mount_ns;
  CORDON_TRY(exec::LaunchedProcess launched,
             Join(shape, exec::StdioFds{}, limits::CgroupAttach{}, request.child.get(), &mount_ns));
  return std::make_unique<PreparedCommand>(std::move(launched), std::move(request.ours),
                                           std::move(shape), std::move(mount_ns));
}

Result<exec::LaunchedProcess> Zygote::Join(const plan::LaunchPlan& plan,
                                           const exec::StdioFds& stdio,
                                           const limits::CgroupAttach& cgroup, int request_fd,
                                           core::UniqueFd* mount_ns_copy) const {
  if (!Fits(plan)) return Fail(ErrorCode::kInvalidArgument, "zygote: the plan does not fit");
  JoinSpec spec;
  spec.holder_pidfd = holder_.pidfd.get();
  spec.setns_flags = CLONE_NEWUSER | CLONE_NEWNS;
  if (plan.namespaces.net) spec.setns_flags |= CLONE_NEWNET;
  if (plan.namespaces.uts) spec.setns_flags |= CLONE_NEWUTS;
  spec.unshare_flags = CLONE_NEWNS | CLONE_NEWPID;
  if (plan.namespaces.ipc) spec.unshare_flags |= CLONE_NEWIPC;
  spec.mounts = mounts_;
  // The command's placeholders, covered by its init in its own copy of the view.
  const std::vector<plan::PlaceholderCover> covers = plan::PlaceholderCovers(plan.placeholders);
  for (const plan::PlaceholderCover& cover : covers) {
    spec.covers.push_back({cover.path.c_str(), cover.directory, cover.pin});
  }
  const std::string ignore_path = (plan.home / plan::kPlaceholderGitIgnore).string();
  const std::string ignore_text = plan::PlaceholderGitIgnore(plan.placeholders);
  if (!ignore_text.empty() && !plan.home.empty()) {
    spec.ignore_path = ignore_path.c_str();
    spec.ignore_text = ignore_text.c_str();
  }
  pid_t init_pid = -1;
  spec.init_pid = &init_pid;
  linux_native::InitEntry entry;
  entry.run = &RunJoiner;
  entry.extra = &spec;
  entry.relay = true;
  entry.relay_init_shares_memory = true;
  entry.relay_pid = &init_pid;
  entry.cgroup = cgroup;
  entry.request_fd = request_fd;
  entry.seccomp_program = plan.seccomp.enabled ? &seccomp_program_ : nullptr;
  int mount_ns_fd = -1;
  spec.proc_fd = proc_.get();
  spec.mount_ns_fd = &mount_ns_fd;
  Result<exec::LaunchedProcess> launched = linux_native::LaunchWithEntry(plan, stdio, entry);
  // Ours whether or not the launch went on to succeed (the joiner shares our descriptors).
  core::UniqueFd mount_ns(mount_ns_fd);
  if (launched && mount_ns_copy != nullptr && mount_ns) {
    mount_ns_copy->Reset(::fcntl(mount_ns.get(), F_DUPFD_CLOEXEC, 3));
  }
  if (launched) HoldMountNamespace(*launched, std::move(mount_ns));
  return launched;
}

}  // namespace cordon::zygote
