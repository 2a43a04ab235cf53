// Child half of the user namespace: the sandbox's init writes its own uid/gid maps. The
// caller's ids map to themselves (root stays 0, a user stays their uid), so files keep their
// owners and tools that compare ids see the real ones. Only one id is mapped: everything else
// shows as the overflow id (nobody).
#pragma once

#include "linux/child_context.h"
#include "linux/error_pipe.h"

namespace cordon::linux_native {

// setgroups "deny" (required before an unprivileged gid_map), uid_map, gid_map.
// Async-signal-safe.
StepResult WriteIdMaps(const ChildContext& c);

}  // namespace cordon::linux_native
