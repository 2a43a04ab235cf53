#include "limits/limits_plan.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>

namespace cordon::limits {
namespace {

// RLIMIT_NPROC counts every process of the user in the sandbox's user namespace, the
// sandbox's init included. The cgroup holds only the command's processes: the command process
// joins it (AttachSelf) right after init forks it.
constexpr std::uint64_t kInitProcesses = 1;

bool KernelAtLeast(int major, int minor) {
  utsname u{};
  if (::uname(&u) != 0) return false;
  int have_major = 0;
  int have_minor = 0;
  if (std::sscanf(u.release, "%d.%d", &have_major, &have_minor) != 2) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

std::string CgroupMechanism(const CgroupController& c, const char* v2_file, const char* v1_file) {
  switch (c.version) {
    case CgroupVersion::kV2:
      return fmt::format("cgroup v2 {} (below {})", v2_file, c.parent.string());
    case CgroupVersion::kV1:
      return fmt::format("cgroup v1 {} (below {})", v1_file, c.parent.string());
    case CgroupVersion::kNone:
      break;
  }
  return {};
}

std::string ProcessesMechanism(const LimitsSupport& support, bool user_namespace) {
  std::string cgroup = CgroupMechanism(support.cgroups.pids, "pids.max", "pids.max");
  if (!cgroup.empty()) return cgroup;
  if (user_namespace && support.nproc_per_user_namespace) {
    return "RLIMIT_NPROC in the sandbox's user namespace";
  }
  return {};
}

}  // namespace

LimitsSupport ProbeLimits() {
  LimitsSupport support;
  support.cgroups = ProbeCgroups();
  support.cgroups_probed = true;
  support.nproc_per_user_namespace = ::geteuid() != 0 && KernelAtLeast(5, 14);
  return support;
}

LimitsSupport ProbeLimitsFor(const LimitsConfig& config) {
  if (config.memory_bytes != 0 || config.processes != 0) return ProbeLimits();
  LimitsSupport support;
  support.nproc_per_user_namespace = ::geteuid() != 0 && KernelAtLeast(5, 14);
  return support;
}

Result<LimitsPlan> PlanLimits(const LimitsConfig& config, const LimitsSupport& support,
                              bool user_namespace) {
  LimitsPlan plan;
  plan.rlimits.open_files = config.open_files;
  plan.rlimits.cpu_seconds = config.cpu_seconds;
  if (config.memory_bytes != 0) {
    if (support.cgroups.memory.version == CgroupVersion::kNone) {
      return Fail(
          ErrorCode::kUnavailable,
          fmt::format("limits.memory_bytes is set but cannot be enforced: it needs the "
                      "cgroup memory controller, which this process cannot use ({}). "
                      "Fix: run as root, or in a cgroup v2 subtree delegated to your "
                      "user with the memory controller enabled, or remove "
                      "limits.memory_bytes (docs/limits.md)",
                      support.cgroups.notes.empty() ? "no cgroup found" : support.cgroups.notes));
    }
    plan.cgroup.memory_bytes = config.memory_bytes;
  }
  if (config.processes != 0) {
    if (support.cgroups.pids.version != CgroupVersion::kNone) {
      plan.cgroup.pids_max = config.processes;
    } else if (user_namespace && support.nproc_per_user_namespace) {
      plan.rlimits.processes = config.processes + kInitProcesses;
    } else {
      return Fail(
          ErrorCode::kUnavailable,
          fmt::format("limits.processes is set but cannot be enforced: no usable cgroup "
                      "pids controller ({}), and RLIMIT_NPROC only counts the sandbox's "
                      "processes for a non-root caller in a user namespace of its own "
                      "(Linux >= 5.14). Fix: run as root with a cgroup pids controller, "
                      "or unprivileged with user namespaces, or remove limits.processes "
                      "(docs/limits.md)",
                      support.cgroups.notes.empty() ? "no cgroup found" : support.cgroups.notes));
    }
  }
  return plan;
}

std::vector<LimitEnforcement> DescribeLimits(const LimitsConfig& config,
                                             const LimitsSupport& support, bool user_namespace) {
  std::vector<LimitEnforcement> out;
  auto add = [&](const char* name, std::uint64_t value, std::string mechanism) {
    const bool enforced = value != 0 && !mechanism.empty();
    out.push_back(LimitEnforcement{name, value, std::move(mechanism), enforced});
  };
  add("timeout_seconds", static_cast<std::uint64_t>(config.timeout.count()),
      "supervisor (kills the whole tree)");
  add("output_bytes", config.output_bytes, "supervisor (keeps head and tail)");
  add("memory_bytes", config.memory_bytes,
      CgroupMechanism(support.cgroups.memory, "memory.max", "memory.limit_in_bytes"));
  add("processes", config.processes, ProcessesMechanism(support, user_namespace));
  add("open_files", config.open_files, "RLIMIT_NOFILE");
  add("cpu_seconds", config.cpu_seconds, "RLIMIT_CPU");
  return out;
}

}  // namespace cordon::limits
