// Per-process resource limits (setrlimit), applied in the command process between clone and
// execve. Everything here is async-signal-safe: a plain struct in, raw syscalls, no allocation,
// no errors objects, no logging (STYLE.md rule 6).
#pragma once

#include <cstdint>

namespace cordon::limits {

// The rlimits of one command. 0 leaves the inherited limit alone. Built in the parent by
// PlanLimits (limits_plan.h); read-only in the child.
struct ResourceLimits {
  std::uint64_t open_files = 0;   // RLIMIT_NOFILE, soft = hard; lowered to the current hard
  std::uint64_t cpu_seconds = 0;  // RLIMIT_CPU: soft = N (SIGXCPU), hard = N + 1 (SIGKILL)
  // RLIMIT_NPROC, soft = hard. Only planned when the sandbox has its own user namespace and the
  // caller is not global root: since Linux 5.14 the count is kept per user namespace
  // (ucounts), so it counts the sandbox's processes only; for root the kernel ignores it.
  std::uint64_t processes = 0;
  bool operator==(const ResourceLimits&) const = default;
};

// The outcome of ApplyResourceLimits: ok, or the resource (RLIMIT_*) and errno that failed.
struct RlimitResult {
  int resource = -1;
  int err = 0;
  bool ok() const { return err == 0; }
};

// Applies `limits` to the calling process (and, by inheritance, everything it starts).
// Async-signal-safe; meant for the command process after clone and before execve, before
// no_new_privs/Landlock/seccomp (so it may still lower hard limits freely; lowering never
// needs a capability). Never raises a limit above what the caller already had.
[[nodiscard]] RlimitResult ApplyResourceLimits(const ResourceLimits& limits) noexcept;

// "RLIMIT_NOFILE", ... for messages ("RLIMIT_?" for anything else).
const char* RlimitName(int resource) noexcept;

}  // namespace cordon::limits
