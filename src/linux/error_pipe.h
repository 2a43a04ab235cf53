// The child's status channel: between clone and execve a failing step writes one StepReport
// {step, errno, detail} to a close-on-exec pipe and _exits. The parent reads the pipe to EOF:
// EOF without a report means execve succeeded (the kernel closed the pipe on exec).
#pragma once

#include <cstdint>
#include <optional>

#include "cordon/error.h"

namespace cordon::linux_native {

// Every step of the child, init's and the command's, in execution order. Values are part of
// the pipe protocol between parent and child of the same binary only.
enum class Step : std::int32_t {
  kNone = 0,
  // init (PID 1 of the sandbox)
  kSignals,
  kParentDeathSignal,
  kParentAlive,
  kSubreaper,
  kSetgroups,
  kUidMap,
  kGidMap,
  kHostname,
  kLoopback,
  kMountPrivate,
  kStagingTmpfs,
  kPivotToStaging,
  kBindHostRoot,
  kHostRootReadOnly,
  kMountPoint,        // detail: index into LaunchPlan::mounts
  kMountOp,           // detail: index into LaunchPlan::mounts
  kPlaceholderCover,  // detail: index into LaunchPlan::placeholders (-1: the cover source)
  kProc,
  kProcReadOnly,  // detail: index into kProcReadOnlyPaths
  kDev,
  kDevNode,  // detail: index into kDevNodes
  kDevPts,
  kDevShm,
  kDevLinks,
  kDevReadOnly,
  kDetachHost,
  kPivotRoot,
  kDetachStaging,
  kNotDumpable,
  kForkCommand,
  // the zygote's per-command init (src/zygote): joins the session's namespaces instead
  kJoinNamespaces,
  kUnshareCommand,
  kForkInit,
  kCommandMount,  // detail: index into the per-command mount list
  // the command process
  kCgroupAttach,  // joining the run's cgroup (limits.memory_bytes / limits.processes)
  kSetsid,
  kStdio,
  kCloseFds,
  kChdir,
  kRlimit,  // detail: the RLIMIT_* resource
  kSecurebits,
  kBoundingSet,
  kAmbientCaps,
  kCapset,
  kNoNewPrivs,
  kLandlockRuleset,
  kLandlockRule,  // detail: index into LaunchPlan::landlock.writable
  kLandlockRestrict,
  kSeccomp,
  kExecve,
  // a prepared command process (docs/decisions/0023): exec of cordon-init --exec
  kExecStub,
  // the command process, network by domain: the sandbox resolver's socket (resolver_socket.h)
  kResolverSocket,
};

const char* StepName(Step step);

struct StepReport {
  Step step = Step::kNone;
  std::int32_t err = 0;
  std::int32_t detail = -1;
};

// A step's outcome inside the child: failed() when err != 0.
struct StepResult {
  Step step = Step::kNone;
  int err = 0;
  int detail = -1;
  bool failed() const { return err != 0; }
};

inline StepResult StepOk() { return {}; }
// Captures errno; call right after the failing system call.
StepResult StepFailed(Step step, int detail = -1);

// Child side: writes the report (one atomic pipe write) and _exit(127)s. Async-signal-safe.
[[noreturn]] void ReportAndExit(int error_fd, const StepResult& result);

// Parent side: reads `fd` until EOF. Returns the report if the child sent one, nullopt if the
// pipe closed without one (execve succeeded); an Error only if reading itself failed.
[[nodiscard]] Result<std::optional<StepReport>> ReadReport(int fd);

}  // namespace cordon::linux_native
