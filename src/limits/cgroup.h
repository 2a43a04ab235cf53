// Per-run cgroups: the memory and process-count limits of one command's whole process tree.
//
// Two hierarchies are supported (decision 0008):
//   v2  a per-run cgroup below a parent this process may write: as root <cgroup2>/cordon.slice
//       (controllers enabled on the way down); unprivileged, a sibling of its own cgroup when
//       the parent is delegated to this user and already distributes the controllers.
//   v1  root only, where the controller is bound to a v1 hierarchy (hybrid hosts): a per-run
//       cgroup below this process's own cgroup in that hierarchy, so the caller's own limits
//       still cover the command.
//
// Ownership: a RunCgroup owns its directories and the descriptors of their cgroup.procs; its
// destructor kills whatever is left in them and removes them. The command process joins by
// writing "0" through those descriptors (AttachSelf) as its first step after the sandbox's
// init forks it, before it can start anything, so every process of the command is born inside
// (the init stays outside: an OOM kill never takes it, and it still reports the status).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"

namespace cordon::limits {

enum class CgroupVersion { kNone, kV1, kV2 };

// Where per-run cgroups for one controller can be created.
struct CgroupController {
  CgroupVersion version = CgroupVersion::kNone;
  std::filesystem::path parent;  // per-run cgroups are created directly below it
};

struct CgroupSupport {
  CgroupController memory;
  CgroupController pids;
  bool kill_file = false;  // cgroup.kill (v2, Linux >= 5.14)
  std::string notes;       // why a controller is unusable, for status and error messages
};

// Finds a usable parent for each controller by really creating and removing a test cgroup
// (as root on cgroup v2 this creates <cgroup2>/cordon.slice and enables the controllers on the
// way, once). `proc_self` is /proc/self (a parameter for tests).
CgroupSupport ProbeCgroups(const std::filesystem::path& proc_self = "/proc/self");

struct CgroupRequest {
  std::uint64_t memory_bytes = 0;  // 0: no memory limit
  std::uint64_t pids_max = 0;      // 0: no process limit (counts every process inside)
};

// Descriptors for the child: plain ints, borrowed from the RunCgroup.
struct CgroupAttach {
  static constexpr int kMax = 2;
  int procs_fds[kMax] = {-1, -1};
};

// Moves the calling process into every cgroup of `attach` (writes "0" to each cgroup.procs).
// Async-signal-safe; returns 0 or the errno of the first failing write.
[[nodiscard]] int AttachSelf(const CgroupAttach& attach) noexcept;

// What the cgroup's counters say happened during the run.
struct CgroupEvents {
  bool oom_killed = false;        // the memory limit's OOM killer killed a process
  bool pids_max_reached = false;  // a fork/clone failed at pids.max
};

class RunCgroup {
 public:
  // Creates the per-run cgroup(s) for `request` and sets the limits. Fails (kUnavailable) when
  // a requested controller has no usable parent, with what is missing and how to fix it.
  [[nodiscard]] static Result<std::unique_ptr<RunCgroup>> Create(const CgroupSupport& support,
                                                                 const CgroupRequest& request);
  ~RunCgroup();
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;

  CgroupAttach attach() const;
  // SIGKILL to every process inside (cgroup.kill, or a loop over cgroup.procs on v1).
  void Kill();
  CgroupEvents ReadEvents() const;
  // Kills what is left and removes the directories (also done by the destructor).
  [[nodiscard]] Result<void> Remove();

  const std::vector<std::filesystem::path>& paths() const { return paths_; }

 private:
  RunCgroup() = default;
  struct Dir {
    CgroupVersion version = CgroupVersion::kNone;
    std::filesystem::path path;
    core::UniqueFd procs;
    bool memory = false;
    bool pids = false;
  };
  std::vector<Dir> dirs_;
  std::vector<std::filesystem::path> paths_;
  bool kill_file_ = false;
};

}  // namespace cordon::limits
