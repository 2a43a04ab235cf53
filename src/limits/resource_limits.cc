#include "limits/resource_limits.h"

#include <sys/resource.h>

#include <cerrno>

namespace cordon::limits {
namespace {

// soft and hard to at most the requested values, never above the current hard limit (raising
// it would need CAP_SYS_RESOURCE, and a lower effective limit still keeps the promise).
RlimitResult Lower(int resource, rlim_t soft, rlim_t hard) noexcept {
  rlimit current{};
  if (::getrlimit(resource, &current) != 0) return {resource, errno};
  if (current.rlim_max != RLIM_INFINITY) {
    if (hard > current.rlim_max) hard = current.rlim_max;
    if (soft > hard) soft = hard;
  }
  const rlimit wanted{soft, hard};
  if (::setrlimit(resource, &wanted) != 0) return {resource, errno};
  return {};
}

}  // namespace

RlimitResult ApplyResourceLimits(const ResourceLimits& limits) noexcept {
  if (limits.open_files != 0) {
    RlimitResult r = Lower(RLIMIT_NOFILE, limits.open_files, limits.open_files);
    if (!r.ok()) return r;
  }
  if (limits.cpu_seconds != 0) {
    // The soft limit sends SIGXCPU (reported as the cpu limit); a process that ignores it gets
    // SIGKILL from the hard limit a second later.
    RlimitResult r = Lower(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1);
    if (!r.ok()) return r;
  }
  if (limits.processes != 0) {
    RlimitResult r = Lower(RLIMIT_NPROC, limits.processes, limits.processes);
    if (!r.ok()) return r;
  }
  return {};
}

const char* RlimitName(int resource) noexcept {
  switch (resource) {
    case RLIMIT_NOFILE:
      return "RLIMIT_NOFILE";
    case RLIMIT_CPU:
      return "RLIMIT_CPU";
    case RLIMIT_NPROC:
      return "RLIMIT_NPROC";
    default:
      return "RLIMIT_?";
  }
}

}  // namespace cordon::limits
