// Child half of Landlock: builds and enforces the ruleset the plan computed (already clamped to
// the probed ABI). Applied in the command process after the mount view exists (rules bind to
// the inodes the command will see, including the private tmpfs) and after no_new_privs (which
// Landlock requires of an unprivileged process).
#pragma once

#include "linux/child_context.h"
#include "linux/error_pipe.h"

namespace cordon::linux_native {

// No-op when c.landlock_abi == 0. A writable path that does not exist is skipped (nothing can
// be written there anyway). Async-signal-safe.
StepResult ApplyLandlock(const ChildContext& c);

}  // namespace cordon::linux_native
