// A prepared command (docs/decisions/0023-prepared-commands.md): a sandbox a long-lived session
// builds through its zygote *before* a command arrives. Its init runs in a PID namespace of its
// own, in its own copy of the mount view with a fresh /tmp, /var/tmp, /dev/shm, HOME and
// /proc, and its command process has already dropped its capabilities and applied
// no_new_privs, the rlimits, Landlock and seccomp; it then waits in cordon-init's exec mode
// (linux/exec_stub.h). When a command comes, the supervisor sends it argv, environment,
// working directory and stdio, and the process execs the command: the per-command kernel work
// (clones, mounts, hardening) is off the command's path.
//
// Each prepared command serves exactly one command. A prepared command fits a plan when the
// plan's namespaces, mounts, seccomp, Landlock and rlimits are those it was built with and the
// plan needs no per-run cgroup (SamePreparedShape); anything else launches the usual way.
#pragma once

#include <memory>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"
#include "plan/launch_plan.h"

namespace cordon::zygote {

class PreparedCommand {
 public:
  // `mount_ns`: the sandbox's mount namespace (invalid: then a plan with placeholders is not
  // started here).
  PreparedCommand(exec::LaunchedProcess launched, core::UniqueFd request, plan::LaunchPlan shape,
                  core::UniqueFd mount_ns = {});
  ~PreparedCommand();  // an unused prepared command is killed and reaped
  PreparedCommand(const PreparedCommand&) = delete;
  PreparedCommand& operator=(const PreparedCommand&) = delete;

  const plan::LaunchPlan& shape() const { return shape_; }
  // The prepared sandbox's init (for tests and diagnostics); -1 once started or discarded.
  pid_t pid() const { return launched_.pid; }
  // False once its init is gone (killed, OOM): it can serve nothing.
  bool Alive() const;
  // SIGKILL to its init (the whole sandbox) without reaping it; the destructor reaps.
  void Kill() const;

  // Covers `plan`'s placeholders in the sandbox (cover_relay.h), then starts `plan`'s command
  // (argv, environment, cwd) with `stdio` (-1: /dev/null) and returns
  // what linux_native::Launch would: the init to wait for and kill, its status pipe, the
  // connect listener. Returns once execve succeeded; a command that cannot start (not found,
  // a cwd that is gone) fails with the one-shot launch's error and leaves nothing running.
  // kUnavailable: the prepared process was gone before it took the command (nothing ran:
  // launch another way). Call once, on the thread that supervises the run.
  [[nodiscard]] Result<exec::LaunchedProcess> Start(const plan::LaunchPlan& plan,
                                                    const exec::StdioFds& stdio);

 private:
  void Discard();  // kill and reap

  exec::LaunchedProcess launched_;
  core::UniqueFd request_;  // the supervisor's end of the request socket
  plan::LaunchPlan shape_;
  core::UniqueFd mount_ns_;  // this sandbox's mount namespace
};

// Whether commands of `plan` may be prepared at all: not with a per-run cgroup (the command
// process joins it before anything else) nor with an open-files limit (the prepared process
// lowers RLIMIT_NOFILE before it receives the command's descriptors, which a small limit
// would then not let in).
bool Preparable(const plan::LaunchPlan& plan);

// The two plans build the same prepared command: the same prepared shape (plan/shape.h: the
// zygote's shape plus Landlock, rlimits and connect rules) and both Preparable.
bool SamePreparedShape(const plan::LaunchPlan& a, const plan::LaunchPlan& b);

}  // namespace cordon::zygote
