// The seccomp filter: default allow, with the calls a build or test never needs refused.
// Built with libseccomp in the parent (which may allocate) and exported as a BPF program; the
// child only hands that program to the kernel (InstallSeccomp), as the last step before exec
// because it removes calls (mount, unshare, ...) that the earlier steps need.
#pragma once

#include <linux/filter.h>

#include <vector>

#include "cordon/error.h"
#include "linux/error_pipe.h"
#include "plan/launch_plan.h"

namespace cordon::linux_native {

// Compiles the filter for the native architecture; other architectures' system calls (i386,
// x32) kill the process. kSystem error when libseccomp fails.
[[nodiscard]] Result<std::vector<sock_filter>> BuildSeccompProgram(
    const plan::SeccompSettings& settings);

// The system calls refused with EPERM whatever the settings (exposed for tests and docs).
const std::vector<const char*>& DeniedSyscalls();

// Child side: loads `program` with SECCOMP_MODE_FILTER. Requires no_new_privs. With
// `broker_fd` >= 0 (the program has SCMP_ACT_NOTIFY rules: SeccompSettings::broker_connect) the
// filter is loaded with SECCOMP_FILTER_FLAG_NEW_LISTENER, the listener is sent on `broker_fd`
// (SCM_RIGHTS) to the supervisor, and both are closed: the command never holds its listener.
// Async-signal-safe.
StepResult InstallSeccomp(const std::vector<sock_filter>& program, int broker_fd = -1);

}  // namespace cordon::linux_native
