// Drops every capability of the command process for good. Matters most for root callers (agents
// in containers run as root) and inside the user namespace, where init holds a full set.
#pragma once

#include "linux/error_pipe.h"

namespace cordon::linux_native {

// In order: lock securebits (so an execve as uid 0 does not grant capabilities back), empty the
// bounding set (no file capability can add one), clear the ambient set, then zero the effective,
// permitted and inheritable sets (last: the earlier steps need CAP_SETPCAP). Without
// CAP_SETPCAP (an unprivileged caller without a user namespace) there is nothing to lock and
// the bounding set cannot be changed; no_new_privs then keeps execve from gaining anything.
// Async-signal-safe.
StepResult DropCapabilities();

}  // namespace cordon::linux_native
