// The pieces that replace the namespaces when there are none (the Landlock-only fallback):
// a private directory on the host instead of the private tmpfs, and a subreaper sweep instead
// of the PID namespace's kill-on-exit. Plan does not produce such plans yet (issue 4 decides
// which guarantees the fallback refuses); Launch supports them so that decision is all that
// is left. See docs/sandbox-linux.md.
#pragma once

#include <string>

#include "cordon/error.h"

namespace cordon::linux_native {

// Parent side: mkdtemp("<base>/cordon-XXXXXX") (mode 0700) with "home" and "tmp" inside; the
// base is the caller's TMPDIR when that is an absolute directory, else /tmp.
[[nodiscard]] Result<std::string> CreatePrivateDir();

// Init side (allocation-free): SIGKILLs every remaining child of init (orphans reparent to init,
// a subreaper) and reaps them, until none is left. Uses /proc/thread-self/children; without it
// (CONFIG_PROC_CHILDREN off) only already-exited children are reaped.
void KillRemainingChildren();

// Init side (allocation-free): removes `path` and everything below it, making directories
// writable first (the command may have chmod'ed them). Best effort; depth-limited.
void RemoveTree(const char* path);

}  // namespace cordon::linux_native
