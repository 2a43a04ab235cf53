// The per-session zygote (ADR 0010): a long-lived session (the MCP server) builds the user,
// mount, network and UTS namespaces and the mount view once; each command joins them and gets
// its own PID and IPC namespaces, its own copy of the mount view with a fresh /tmp, /var/tmp,
// /dev/shm and /proc, and the one-shot path's per-process hardening (capabilities dropped,
// no_new_privs, Landlock, seccomp). What the supervisor receives is the same contract as
// linux_native::Launch: a child to wait for and kill (killing it kills the command's tree),
// and the command's status on a pipe.
//
// A zygote serves only plans of the sandbox shape it was built from (plan/shape.h: namespaces,
// hostname, mounts with the identity of every bind source and mask target, seccomp settings):
// a command whose plan differs (a .git that appeared, a hidden path that was created or
// replaced on the host, another config) runs one-shot instead, and the session builds anew.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"
#include "plan/launch_plan.h"
#include "zygote/command_mounts.h"
#include "zygote/prepared_command.h"

namespace cordon::zygote {

class Zygote {
 public:
  // Builds the session's namespaces for `plan` (which must be sandboxed, with user, mount and
  // PID namespaces). kUnavailable when the plan's mounts cannot be replayed per command.
  // `previous`: the zygote this one replaces. When it is alive and `plan` has a network
  // namespace like its, the new holder keeps its user, network and UTS namespaces
  // (RejoinSpec), so the session's loopback and what listens there outlive the rebuild.
  [[nodiscard]] static Result<std::unique_ptr<Zygote>> Start(const plan::LaunchPlan& plan,
                                                             const Zygote* previous = nullptr);
  // Whether a holder for `plan` may be born into this one's user and network namespaces.
  bool SharesNetworkWith(const plan::LaunchPlan& plan) const;
  ~Zygote();  // ends the holder and reaps it
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // Whether `plan` may run here: the same sandbox shape (plan::SameSandboxShape).
  bool Fits(const plan::LaunchPlan& plan) const;
  // False once the holder is gone (killed, OOM): the session then builds a new zygote.
  bool Alive() const;
  // False once the holder's mount view lacks a mount it was built with (mount_ids.h): the
  // host replaced or removed a file a mask covered after the plan that chose this zygote named
  // it. The session then builds anew, masking what is there now.
  bool Intact() const;

  // linux_native::Launch for a plan that Fits: same errors, same hand-over.
  [[nodiscard]] Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan,
                                                     const exec::StdioFds& stdio,
                                                     const limits::CgroupAttach& cgroup = {}) const;

  // A prepared command for plans of `plan`'s shape (prepared_command.h), built now: the caller
  // hands it a command later. kUnavailable when `plan` needs a per-run cgroup or there is no
  // usable cordon-init. The sandbox dies with the calling *thread* (its parent-death signal):
  // call it from a thread that lives as long as the session.
  [[nodiscard]] Result<std::unique_ptr<PreparedCommand>> Prepare(
      const plan::LaunchPlan& plan) const;

 private:
  Zygote() = default;
  // `mount_ns_copy`: when given, a descriptor of the command's mount namespace (invalid when
  // the joiner could not open one).
  Result<exec::LaunchedProcess> Join(const plan::LaunchPlan& plan, const exec::StdioFds& stdio,
                                     const limits::CgroupAttach& cgroup, int request_fd,
                                     core::UniqueFd* mount_ns_copy = nullptr) const;

  plan::LaunchPlan shape_;  // the plan the namespaces were built from
  std::vector<CommandMount> mounts_;
  std::vector<sock_filter> seccomp_program_;  // compiled once for the session's settings
  exec::LaunchedProcess holder_;
  core::UniqueFd proc_;  // the supervisor's /proc (O_PATH), for the joiners (namespace_hold.h)
  std::vector<std::uint64_t> view_mounts_;  // the holder's view when it was built (sorted IDs)
};

}  // namespace cordon::zygote
