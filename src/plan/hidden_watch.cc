#include "plan/hidden_watch.h"

#include <algorithm>
#include <atomic>
#include <list>
#include <mutex>
#include <string>
#include <utility>

#include "plan/directory_watch.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

std::string KeyOf(const SandboxConfig& config, const std::vector<fs::path>& homes, AllowList list) {
  std::string key(1, static_cast<char>('0' + static_cast<int>(list)));
  for (const fs::path& home : homes) key += '\0' + home.native();
  key += '\1';
  for (const fs::path& path : config.hidden_paths) key += '\0' + path.native();
  key += '\1';
  for (const fs::path& path : config.own_config) key += '\0' + path.native();
  return key;
}

}  // namespace

struct HiddenViewCache::Entry {
  std::string key;
  DirectoryWatch watch;
  bool valid = false;  // view reflects the host (false after a change or a watch failure)
  HiddenView view;
};

HiddenViewCache::HiddenViewCache() = default;
HiddenViewCache::~HiddenViewCache() = default;

// A scan whose result may be kept: learn what it looks at, watch all of it, then scan again
// (what changes after the watches are in place is reported; what changed before, the second
// scan sees). Kept only when both scans were exact and the second looked at nothing unwatched.
void HiddenViewCache::Rescan(Entry& entry, const SandboxConfig& config,
                             const std::vector<fs::path>& homes, AllowList list) {
  ScannedDirs first;
  (void)BuildHiddenView(config, homes, list, &first);
  bool watched = first.exact && entry.watch.Start();
  std::sort(first.dirs.begin(), first.dirs.end());
  first.dirs.erase(std::unique(first.dirs.begin(), first.dirs.end()), first.dirs.end());
  for (const fs::path& dir : first.dirs) {
    if (!watched) break;
    watched = entry.watch.Add(dir);
  }
  ScannedDirs second;
  entry.view = BuildHiddenView(config, homes, list, &second);
  scans_.fetch_add(2);
  const bool covered =
      std::all_of(second.dirs.begin(), second.dirs.end(), [&](const fs::path& dir) {
        return std::binary_search(first.dirs.begin(), first.dirs.end(), dir);
      });
  entry.valid = watched && second.exact && covered;
}

HiddenView BuildHiddenView(const SandboxConfig& config, const std::vector<fs::path>& homes,
                           AllowList list, ScannedDirs* seen) {
  HiddenView view;
  view.scan = ScanHiddenPaths(config, homes, seen);
  if (list == AllowList::kPresent) {
    view.readable = ReadAllowList(view.scan.present, seen);
  } else if (list == AllowList::kPresentAndAbsent) {
    std::vector<HiddenTarget> all = view.scan.present;
    all.insert(all.end(), view.scan.absent.begin(), view.scan.absent.end());
    view.readable = ReadAllowList(all, seen);
  }
  return view;
}

HiddenView HiddenViewCache::View(const SandboxConfig& config, const std::vector<fs::path>& homes,
                                 AllowList list) {
  std::lock_guard lock(mutex_);
  const std::string key = KeyOf(config, homes, list);
  auto it =
      std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
  if (it == entries_.end()) {
    entries_.emplace_front();
    entries_.front().key = key;
    while (entries_.size() > kHiddenViewsKept) entries_.pop_back();
  } else {
    entries_.splice(entries_.begin(), entries_, it);
  }
  Entry& entry = entries_.front();
  if (!entry.valid || entry.watch.Changed()) Rescan(entry, config, homes, list);
  return entry.view;
}

}  // namespace cordon::plan
