// The hidden paths' share of every plan — the scan of the credential locations (ScanHiddenPaths)
// and the read allow-list around them (ReadAllowList) — kept by a long-lived process while
// nothing the scan looked at changed: about half of a plan's system calls, repeated for every
// command of the MCP server and the run server. The same contract as decision 0022's watched
// /etc scan: the directories the scan looked into and listed are watched (DirectoryWatch)
// before the scan whose result is kept, any change or any failure to watch means a new scan,
// and a scan that went through realpath (a symlink on the way) is never kept.
//
//   plan::HiddenViewCache cache;                         // a long-lived session's (PlanCaches)
//   HiddenView view = cache.View(config, homes, list);   // per plan
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <list>
#include <mutex>
#include <vector>

#include "cordon/config.h"
#include "plan/hidden_paths.h"

namespace cordon::plan {

// Which read allow-list a plan needs: none (masks alone, no Landlock), around the hidden paths
// that exist (the fallback without a mount namespace), or around those and the absent ones
// (masks plus Landlock: a secret the host creates during the run stays unreadable).
enum class AllowList { kNone, kPresent, kPresentAndAbsent };

struct HiddenView {
  HiddenScan scan;
  std::vector<std::filesystem::path> readable;  // empty for AllowList::kNone
};

// Computed now; `seen` receives what it looked at.
HiddenView BuildHiddenView(const SandboxConfig& config,
                           const std::vector<std::filesystem::path>& homes, AllowList list,
                           ScannedDirs* seen = nullptr);

// A session's watched copies, one per (hidden_paths, homes, list) — at most kHiddenViewsKept
// of them, the least recently used dropped. Thread-safe. A plan without one (a one-shot
// process plans once) calls BuildHiddenView.
inline constexpr std::size_t kHiddenViewsKept = 8;
class HiddenViewCache {
 public:
  HiddenViewCache();
  ~HiddenViewCache();
  HiddenViewCache(const HiddenViewCache&) = delete;
  HiddenViewCache& operator=(const HiddenViewCache&) = delete;

  HiddenView View(const SandboxConfig& config, const std::vector<std::filesystem::path>& homes,
                  AllowList list);
  // For tests: how many scans View has made.
  std::uint64_t scans() const { return scans_.load(); }

 private:
  struct Entry;
  void Rescan(Entry& entry, const SandboxConfig& config,
              const std::vector<std::filesystem::path>& homes, AllowList list);

  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::atomic<std::uint64_t> scans_{0};
};

}  // namespace cordon::plan
