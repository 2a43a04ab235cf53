// Change detection for host scans a long-lived process caches (decision 0022): inotify on each
// directory a scan looked into (entries created, removed, renamed, their modes or owners
// changed: IN_ATTRIB reports a child's chmod/chown to its directory's watch; the directory
// itself removed or moved), a queue overflow, and any change of this process's mount table (a
// bind mount over a watched path, which inotify cannot see; POLLPRI on /proc/self/mountinfo).
//
//   DirectoryWatch watch;
//   watch.Start();                      // before the scan: what changes during it is reported
//   for (dir : dirs) watch.Add(dir);    // false: not watched (the cache must not answer)
//   ... scan ...
//   if (watch.Changed()) rescan;        // later, per use: cheap when nothing happened
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include "core/unique_fd.h"

namespace cordon::plan {

class DirectoryWatch {
 public:
  // A new inotify instance and a fresh mount-table descriptor; false when either cannot be had.
  bool Start();
  // Watches `dir` (not following a symlink; a non-directory is refused). False when it could
  // not be watched (gone, out of watches): whatever depends on it must not be cached.
  bool Add(const std::filesystem::path& dir);
  // Something was reported since Start (drains the queue; also true after a read error or when
  // Start failed).
  bool Changed();
  // Watches `dir` as Add does; the watch descriptor, or -1.
  int Watch(const std::filesystem::path& dir);
  // The same as Changed(), counting only the events `relevant` accepts (called with the watch
  // descriptor, the event's name and whether it is about a directory); an event without a name
  // (the watched directory itself removed or moved, an overflow, a dropped watch) always
  // counts, and so does any change of the mount table.
  using Relevant = std::function<bool(int watch, std::string_view name, bool directory)>;
  bool Changed(const Relevant& relevant);

 private:
  core::UniqueFd inotify_;
  core::UniqueFd mountinfo_;
};

}  // namespace cordon::plan
