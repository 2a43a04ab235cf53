// A long-lived process's copy of BuildRootOnlyMasks (host_ipc.h), rescanned only when the
// scanned tree may have changed. The walk of /etc is the largest host scan a root caller's
// plan makes (about a thousand fstatat on Debian), and a long-lived session (the MCP server)
// plans every command: decision 0022.
//
//   plan::RootOnlyCache cache;                       // a long-lived session's (PlanCaches)
//   std::vector<MountOp> masks = cache.Masks();      // per plan: cached or rescanned
//
// Change detection (plan/directory_watch.h) watches the tree's root and every directory the
// walk descends into, and this process's mount table. Any change, or any failure to watch,
// means a full rescan: the cache never answers for a tree it could not watch. Watches are in
// place before the walk, so a change during the walk is seen by the next call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "cordon/error.h"
#include "plan/directory_watch.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

class RootOnlyWatch {
 public:
  // Watches `etc` (the tree BuildRootOnlyMasks walks). Fails when inotify or the mount table
  // cannot be watched (the caller then scans every time).
  [[nodiscard]] static Result<std::unique_ptr<RootOnlyWatch>> Create(std::filesystem::path etc);

  // BuildRootOnlyMasks(etc) as it is now: the cached result when nothing was reported since the
  // last walk, else a new walk (with new watches). Not thread-safe: callers serialise.
  std::vector<MountOp> Masks();

  std::uint64_t walks() const { return walks_; }  // for tests: how often the tree was walked

 private:
  explicit RootOnlyWatch(std::filesystem::path etc) : etc_(std::move(etc)) {}
  bool Rewatch();  // watches the tree as it is now; false when some of it is not watched

  std::filesystem::path etc_;
  DirectoryWatch watch_;
  bool valid_ = false;  // masks_ reflects the tree (false after a change or a watch failure)
  std::vector<MountOp> masks_;
  std::uint64_t walks_ = 0;
};

// A session's watched copy of /etc's scan for the planner (thread-safe; the watch is made at
// the first call, and where it cannot be made every call walks). A plan without one (a
// one-shot process, for which a watch costs more than the one walk it saves) walks.
class RootOnlyCache {
 public:
  std::vector<MountOp> Masks();

 private:
  std::mutex mutex_;
  std::unique_ptr<RootOnlyWatch> watch_;
  bool unwatchable_ = false;  // the watch could not be made: walk every time
};

}  // namespace cordon::plan
