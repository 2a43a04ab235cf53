// Whether an abstract unix socket belongs to the sandbox (docs/decisions/0019). With network
// allow the sandbox shares the host's network namespace, hence its abstract names, and Landlock
// (ABI >= 6) lets the command reach only the abstract sockets created inside its own sandbox.
// The connect broker performs the connect outside that Landlock domain, so it asks this first:
// is a socket bound to `name` held open by a process of the command's PID namespace? And it
// keeps that socket open until its connect is done, so the name cannot change hands meanwhile.
#pragma once

#include <sys/types.h>

#include <string_view>

#include "core/unique_fd.h"

namespace cordon::exec {

// `name`: the abstract address without its leading NUL (the bytes after it, exactly as long as
// the caller's address said). `tid`: a thread of the sandboxed command.
//
// Returns a descriptor of the socket bound to `name` when a process of the command's PID
// namespace holds it (taken from that process with pidfd_getfd). A unix socket keeps its name
// until its last descriptor closes, so while the caller keeps this open the name stays bound to
// this very socket: a connect to the name made meanwhile reaches it and no socket bound later
// (the sandbox's process closing its socket and a host process binding the name between this
// check and the connect). Invalid when the command has no PID namespace of its own (every host
// process would count as "inside"), when no socket is bound to the name in this network
// namespace, or when none of them is held by (and can be taken from) a process of the command's
// PID namespace. Reads sock_diag and /proc; a few ms on a busy host.
[[nodiscard]] core::UniqueFd HoldSandboxAbstractSocket(pid_t tid, std::string_view name);

}  // namespace cordon::exec
