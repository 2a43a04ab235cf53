#include "plan/root_only_watch.h"

#include <dirent.h>

#include <cerrno>
#include <mutex>
#include <utility>

#include "core/syscall_error.h"
#include "plan/host_ipc.h"

namespace cordon::plan {
#if defined(__linux__)

Result<std::unique_ptr<RootOnlyWatch>> RootOnlyWatch::Create(std::filesystem::path etc) {
  std::unique_ptr<RootOnlyWatch> watch(new RootOnlyWatch(std::move(etc)));
  if (!watch->Rewatch()) {
    return core::FailSyscall("inotify_add_watch",
                             watch->etc_.string() + " and its directories, /proc/self/mountinfo");
  }
  return watch;
}

bool RootOnlyWatch::Rewatch() {
  // The root first: a directory created after the listing below is reported there.
  if (!watch_.Start() || !watch_.Add(etc_)) return false;
  DIR* dir = ::opendir(etc_.c_str());
  if (dir == nullptr) return false;
  bool ok = true;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == ".." || entry->d_type == DT_LNK) continue;
    if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
    // A DT_UNKNOWN file or a symlink is refused (ENOTDIR) and needs no watch; the walk does not
    // descend into it either. Anything else (out of watches) leaves the tree unwatched.
    if (!watch_.Add(etc_ / name) && errno != ENOTDIR && errno != ENOENT) {
      ok = false;
      break;
    }
  }
  ::closedir(dir);
  return ok;
}

std::vector<MountOp> RootOnlyWatch::Masks() {
  if (valid_ && !watch_.Changed()) return masks_;
  valid_ = Rewatch();
  masks_ = BuildRootOnlyMasks(etc_);
  ++walks_;
  return masks_;
}

std::vector<MountOp> RootOnlyCache::Masks() {
  std::lock_guard lock(mutex_);
  if (unwatchable_) return BuildRootOnlyMasks();
  if (!watch_) {
    Result<std::unique_ptr<RootOnlyWatch>> watch = RootOnlyWatch::Create("/etc");
    if (!watch) {
      unwatchable_ = true;  // no watch here: walk every time
      return BuildRootOnlyMasks();
    }
    watch_ = *std::move(watch);
  }
  return watch_->Masks();
}

#else  // inotify and /proc/self/mountinfo are Linux's: elsewhere every plan walks.

Result<std::unique_ptr<RootOnlyWatch>> RootOnlyWatch::Create(std::filesystem::path etc) {
  return Fail(ErrorCode::kUnavailable,
              "watching " + etc.string() + " needs inotify, which this platform lacks");
}
bool RootOnlyWatch::Rewatch() { return false; }
std::vector<MountOp> RootOnlyWatch::Masks() {
  ++walks_;
  return BuildRootOnlyMasks(etc_);
}
std::vector<MountOp> RootOnlyCache::Masks() { return BuildRootOnlyMasks(); }

#endif

}  // namespace cordon::plan
