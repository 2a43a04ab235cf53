// The processes of the zygote path (ADR 0010), run between clone and execve (no allocation:
// everything is prepared in the parent):
//
//   holder   one per session: clone(CLONE_NEW{USER,NS,PID,NET,IPC,UTS}) like the one-shot init,
//            builds the id maps, loopback and the mount view once, then only waits. Its
//            namespaces are what every command joins. One rebuilt for a plan of another shape
//            keeps the previous one's user, network and UTS namespaces (RejoinSpec). It ends when
//            its status pipe loses its reader (the Zygote object closed it, or the server died) or
//            on SIGKILL.
//   joiner   one per command, a CLONE_VM|CLONE_VFORK relay of the supervising thread (no copy
//            of the server's page tables): setns() into the holder's user, mount, net and UTS
//            namespaces; unshare(CLONE_NEWNS|CLONE_NEWPID[|CLONE_NEWIPC]); creates the
//            command's init with clone(CLONE_PARENT), so that the init is the supervisor's
//            own child (what it waits for and kills) — with CLONE_VM|CLONE_VFORK on a stack
//            of its own when cordon-init is usable (init then shares the server's memory until
//            it execs cordon-init, as a one-shot init does), else fork-like —, opens the mount
//            namespace it left the init in for the supervisor to hold (namespace_hold.h), and
//            exits.
//   init     PID 1 of the command's own PID namespace, in the command's own copy of the mount
//            view: default signals, parent-death signal (the supervising thread), the
//            parent-alive check; a fresh /tmp, /var/tmp, /dev/shm and /proc (CommandMounts),
//            then exactly the one-shot init's tail: non-dumpable (only when it does not share
//            the server's memory), clone RunCommand (caps, no_new_privs, Landlock, seccomp,
//            execve), exec cordon-init to reap (else reap itself), write the status, exit
//            (which kills the command's tree).
#pragma once

#include <sys/types.h>

#include <vector>

#include "linux/child_context.h"
#include "zygote/command_mounts.h"

namespace cordon::zygote {

// What the joiner and the command's init need beyond the ChildContext. Built in the parent.
struct JoinSpec {
  int holder_pidfd = -1;             // pidfd of the holder (setns target)
  int setns_flags = 0;               // CLONE_NEWUSER|CLONE_NEWNS[|CLONE_NEWNET][|CLONE_NEWUTS]
  int unshare_flags = 0;             // CLONE_NEWNS|CLONE_NEWPID[|CLONE_NEWIPC]
  std::vector<CommandMount> mounts;  // the strings stay owned by this spec
  std::vector<linux_native::ChildCover> covers;  // the command's placeholders (borrowed strings)
  const char* ignore_path = nullptr;             // and git's ignore file for them (borrowed)
  const char* ignore_text = nullptr;
  pid_t* init_pid = nullptr;  // where the joiner stores the init's pid
  // The supervisor's /proc (O_PATH), or -1: the joiner opens its own mount namespace through
  // it, the one init is born into, and stores the descriptor (in the supervisor's table,
  // which it shares) in *mount_ns_fd; -1 there when it could not (namespace_hold.h).
  int proc_fd = -1;
  int* mount_ns_fd = nullptr;
};

// A holder rebuilt for a plan of another shape (the host changed under the session) is born
// into the previous holder's user, network and UTS namespaces, so that a server a command
// started on the session's loopback (a background command, decision 0043) stays reachable from
// the commands after the change; its mount view (built afresh from the host's), PID and IPC
// namespaces are its own. A CLONE_VM relay like the joiner: setns, unshare, then the holder
// with clone(CLONE_PARENT), which builds the view and waits as RunHolder does.
struct RejoinSpec {
  int anchor_pidfd = -1;        // pidfd of the previous holder (setns target)
  int setns_flags = 0;          // CLONE_NEWUSER|CLONE_NEWNET[|CLONE_NEWUTS]
  int unshare_flags = 0;        // CLONE_NEWNS|CLONE_NEWPID[|CLONE_NEWIPC]
  pid_t* holder_pid = nullptr;  // where the relay stores the holder's pid
};

// InitEntry bodies (linux_native::LaunchWithEntry). `extra` is a const JoinSpec* for
// RunJoiner, a const RejoinSpec* for RunRejoiningHolder and unused for RunHolder.
void RunHolder(const linux_native::ChildContext& c, const void* extra);
void RunRejoiningHolder(const linux_native::ChildContext& c, const void* extra);
void RunJoiner(const linux_native::ChildContext& c, const void* extra);

}  // namespace cordon::zygote
