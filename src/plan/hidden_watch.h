// The hidden paths' share of every plan — the scan of the credential locations (ScanHiddenPaths)
// and the read allow-list around them (ReadAllowList) — kept by a long-lived process while
// nothing the scan looked at changed: about half of a plan's system calls, repeated for every
// command of the MCP server and the run server. The same contract as decision 0022's watched
// /etc scan: the directories the scan looked into and listed are watched (DirectoryWatch)
// before the scan whose result is kept, any change or any failure to watch means a new scan,
// and a scan that went through realpath (a symlink on the way) is never kept.
//
//   plan::SetHiddenWatch(true);                                  // a long-lived process, once
//   HiddenView view = plan::HiddenPathsView(config, homes, list);  // per plan
#pragma once

#include <filesystem>
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

// Process-wide: with the watch on, HiddenPathsView answers from a watched copy per
// (hidden_paths, homes, list) — at most kHiddenViewsKept of them, the least recently used
// dropped — and is thread-safe; off (the default, a one-shot process plans once), it builds.
inline constexpr std::size_t kHiddenViewsKept = 8;
void SetHiddenWatch(bool enabled);
HiddenView HiddenPathsView(const SandboxConfig& config,
                           const std::vector<std::filesystem::path>& homes, AllowList list);
// For tests: how many scans HiddenPathsView has made since the watch was switched on.
std::uint64_t HiddenViewScans();

}  // namespace cordon::plan
