// The native Linux backend's entry point: builds the sandbox described by a LaunchPlan and
// execs the command inside it.
#pragma once

#include <linux/filter.h>

#include <vector>

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "limits/cgroup.h"
#include "plan/launch_plan.h"

namespace cordon::linux_native {

// Starts `plan` (plan.sandboxed must be true). Returns once the command's execve succeeded, or
// with the error of the first setup step that failed ("native sandbox: step bind_writable:
// mount(/x, MS_BIND|MS_REC): Permission denied"); in that case nothing ran and no process is
// left behind. The returned pid is the sandbox's init (PID 1 of its PID namespace); killing it
// kills the whole sandbox. Init writes the command's wait status to status_fd, then exits.
//
// Thread-safe: several threads may launch at once. The sandbox dies with the *thread* that
// called Launch (PR_SET_PDEATHSIG is tied to the creating thread), so call it from the thread
// that supervises the run until the end. The caller reaps `pid` (it is the caller's child).
// A plan without user, mount and PID namespaces runs as the Landlock-only fallback (it needs
// Landlock and seccomp, else kUnavailable): then kill_process_group is set, and HOME/TMPDIR
// live in a private host directory that init removes (docs/sandbox-linux.md).
// `cgroup`: the run's cgroup (plan.limits.needs_cgroup(); owned by the caller), which the
// command process joins before it can start anything.
[[nodiscard]] Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan,
                                                   const exec::StdioFds& stdio,
                                                   const limits::CgroupAttach& cgroup = {});

struct ChildContext;

// How the launched process starts: the per-session zygote (src/zygote) reuses Launch's pipes,
// error reporting and hand-over but runs its own first process. `run` must not return (it
// reports a failing step on c.error_fd and _exits); `extra` is passed through (prepared
// before clone: the child may not allocate). clone_flags replaces the plan's namespace flags.
// seccomp_program: the plan's filter compiled earlier (the zygote compiles it once per
// session; libseccomp's compile is the largest CPU cost of a launch); nullptr compiles it.
// relay: `run` runs in a CLONE_VM|CLONE_FILES|CLONE_VFORK child on a stack of its own (no copy
// of the caller's page tables; the calling thread waits until it exits). It must create the
// real first process with clone(CLONE_PARENT) (so that process is the caller's child, which
// the supervisor can reap), store its pid in *relay_pid and _exit; it may only make raw system
// calls (it shares the caller's memory while the caller's other threads run). It shares the
// caller's descriptor table too: a descriptor it opens is the caller's to close. With
// relay_init_shares_memory that first process may share the memory too (until it execs
// cordon-init): the calling thread then waits until then, and so until the command's execve.
struct InitEntry {
  void (*run)(const ChildContext& c, const void* extra) = nullptr;
  const void* extra = nullptr;
  unsigned long clone_flags = 0;
  const std::vector<sock_filter>* seccomp_program = nullptr;
  bool relay = false;
  pid_t* relay_pid = nullptr;
  limits::CgroupAttach cgroup;  // as Launch's `cgroup`
  // A prepared command (docs/decisions/0023): the command process's end of the request
  // socket (borrowed); the launch then returns once cordon-init --exec waits on it.
  int request_fd = -1;
  // A relay whose init may share the supervisor's memory until it execs cordon-init (a
  // zygote's joiner): it gets a stack of its own (ChildContext::init_stack_top) when a reaper
  // is there to exec.
  bool relay_init_shares_memory = false;
  // The mount view serves later commands (a zygote's namespace holder): every mask is
  // required, also one whose target cannot be looked up now (ChildContext::view_reused).
  bool view_reused = false;
};

struct StepReport;
// The error Launch returns for a step that failed in the child, e.g. "native sandbox: step
// execve: execve(foo): No such file or directory" (kNotFound for execve's ENOENT/EACCES).
[[nodiscard]] Error StepError(const plan::LaunchPlan& plan, const StepReport& report);

// The connect broker's channel (ADR 0019): a socketpair whose `child` end the command process
// (or the bwrap trampoline) sends its seccomp listener on, and whose `ours` end receives it.
struct BrokerChannel {
  core::UniqueFd ours;
  core::UniqueFd child;
};
[[nodiscard]] Result<BrokerChannel> MakeBrokerChannel();
// The same shape for any AF_UNIX socket `type`: close-on-exec, both ends above 2 (like the
// launcher's pipes: the child's dup2 onto 0..2 never hits them, even in a process started with
// a standard descriptor closed). `what` names it in errors.
[[nodiscard]] Result<BrokerChannel> MakeSocketPair(int type, const char* what);
// The listener, once the command's execve succeeded (it was sent before): queued on `fd` now or
// never (a zygote holder runs no command). Invalid when none came: the command's connects
// then fail with ENOSYS (closed, not open).
core::UniqueFd ReceiveListener(int fd);
// What the broker lets the command reach: the plan's writable areas, plus `private_dir` (the
// fallback's private HOME and TMPDIR; nullptr: none).
exec::ConnectRules BrokerRules(const plan::LaunchPlan& plan, const char* private_dir);

// Launch with `entry` as the cloned process's body instead of RunInit.
[[nodiscard]] Result<exec::LaunchedProcess> LaunchWithEntry(const plan::LaunchPlan& plan,
                                                            const exec::StdioFds& stdio,
                                                            const InitEntry& entry);

}  // namespace cordon::linux_native
