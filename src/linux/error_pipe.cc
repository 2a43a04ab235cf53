#include "linux/error_pipe.h"

#include <unistd.h>

#include <cerrno>

#include "core/syscall_error.h"

namespace cordon::linux_native {

const char* StepName(Step step) {
  switch (step) {
    case Step::kNone:
      return "none";
    case Step::kParentDeathSignal:
      return "parent_death_signal";
    case Step::kParentAlive:
      return "parent_alive";
    case Step::kSubreaper:
      return "child_subreaper";
    case Step::kSetgroups:
      return "setgroups_deny";
    case Step::kUidMap:
      return "uid_map";
    case Step::kGidMap:
      return "gid_map";
    case Step::kHostname:
      return "hostname";
    case Step::kLoopback:
      return "loopback_up";
    case Step::kResolverSocket:
      return "resolver_socket";
    case Step::kMountPrivate:
      return "mount_private";
    case Step::kStagingTmpfs:
      return "staging_tmpfs";
    case Step::kPivotToStaging:
      return "pivot_to_staging";
    case Step::kBindHostRoot:
      return "bind_host_root";
    case Step::kHostRootReadOnly:
      return "host_root_read_only";
    case Step::kMountPoint:
      return "mount_point";
    case Step::kMountOp:
      return "mount_op";
    case Step::kPlaceholderCover:
      return "placeholder_cover";
    case Step::kProc:
      return "mount_proc";
    case Step::kProcReadOnly:
      return "proc_read_only";
    case Step::kDev:
      return "mount_dev";
    case Step::kDevNode:
      return "dev_node";
    case Step::kDevPts:
      return "dev_pts";
    case Step::kDevShm:
      return "dev_shm";
    case Step::kDevLinks:
      return "dev_links";
    case Step::kDevReadOnly:
      return "dev_read_only";
    case Step::kDetachHost:
      return "detach_host";
    case Step::kPivotRoot:
      return "pivot_root";
    case Step::kDetachStaging:
      return "detach_staging";
    case Step::kNotDumpable:
      return "not_dumpable";
    case Step::kForkCommand:
      return "fork_command";
    case Step::kJoinNamespaces:
      return "join_session_namespaces";
    case Step::kUnshareCommand:
      return "unshare_command_namespaces";
    case Step::kForkInit:
      return "fork_command_init";
    case Step::kCommandMount:
      return "command_mount";
    case Step::kSetsid:
      return "setsid";
    case Step::kSignals:
      return "reset_signals";
    case Step::kStdio:
      return "stdio";
    case Step::kCloseFds:
      return "close_fds";
    case Step::kChdir:
      return "chdir";
    case Step::kSecurebits:
      return "securebits";
    case Step::kBoundingSet:
      return "capability_bounding_set";
    case Step::kAmbientCaps:
      return "ambient_capabilities";
    case Step::kCapset:
      return "capset";
    case Step::kNoNewPrivs:
      return "no_new_privs";
    case Step::kLandlockRuleset:
      return "landlock_ruleset";
    case Step::kLandlockRule:
      return "landlock_rule";
    case Step::kLandlockRestrict:
      return "landlock_restrict_self";
    case Step::kSeccomp:
      return "seccomp";
    case Step::kCgroupAttach:
      return "cgroup_attach";
    case Step::kRlimit:
      return "rlimit";
    case Step::kExecve:
      return "execve";
    case Step::kExecStub:
      return "exec_prepared_command";
  }
  return "unknown";
}

StepResult StepFailed(Step step, int detail) {
  int err = errno != 0 ? errno : EIO;  // a failed step must never read as success
  return StepResult{step, err, detail};
}

void ReportAndExit(int error_fd, const StepResult& result) {
  StepReport report{result.step, result.err, result.detail};
  // Smaller than PIPE_BUF: the write is atomic, the parent sees all of it or nothing.
  (void)!::write(error_fd, &report, sizeof report);
  ::_exit(127);
}

Result<std::optional<StepReport>> ReadReport(int fd) {
  StepReport report;
  char* out = reinterpret_cast<char*>(&report);
  std::size_t got = 0;
  while (got < sizeof report) {
    ssize_t n = ::read(fd, out + got, sizeof report - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::FailSyscall("read", "sandbox error pipe");
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got == sizeof report) return std::optional<StepReport>(report);
  return std::optional<StepReport>();
}

}  // namespace cordon::linux_native
