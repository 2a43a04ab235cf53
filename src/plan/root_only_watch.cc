#include "plan/root_only_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#if defined(__linux__)
#include <sys/inotify.h>
#endif
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <utility>

#include "core/syscall_error.h"
#include "plan/host_ipc.h"

namespace cordon::plan {
#if defined(__linux__)
namespace {

namespace fs = std::filesystem;

// Whatever can change which entries are readable by others or what a path names: creation,
// removal and renames of entries, their modes and owners (IN_ATTRIB on a directory watch covers
// its children), and the watched directory itself going away. Content writes do not matter.
constexpr std::uint32_t kWatchMask = IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                                     IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW |
                                     IN_ONLYDIR;

}  // namespace

Result<std::unique_ptr<RootOnlyWatch>> RootOnlyWatch::Create(fs::path etc) {
  std::unique_ptr<RootOnlyWatch> watch(new RootOnlyWatch(std::move(etc)));
  // The mount table: poll() reports POLLPRI once per change after this open (proc(5)).
  watch->mountinfo_.Reset(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!watch->mountinfo_) return core::FailSyscall("open", "/proc/self/mountinfo");
  watch->Rewatch();
  if (!watch->inotify_) return core::FailSyscall("inotify_add_watch", watch->etc_.string());
  return watch;
}

void RootOnlyWatch::Rewatch() {
  valid_ = false;
  inotify_.Reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify_) return;
  // The root first: a directory created after the listing below is reported there.
  if (::inotify_add_watch(inotify_.get(), etc_.c_str(), kWatchMask) < 0) {
    inotify_.Reset();
    return;
  }
  DIR* dir = ::opendir(etc_.c_str());
  if (dir == nullptr) {
    inotify_.Reset();
    return;
  }
  bool ok = true;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == ".." || entry->d_type == DT_LNK) continue;
    if (entry->d_type != DT_DIR && entry->d_type != DT_UNKNOWN) continue;
    const fs::path sub = etc_ / name;
    // IN_ONLYDIR and IN_DONT_FOLLOW: a DT_UNKNOWN file or a symlink is refused (ENOTDIR) and
    // needs no watch; the walk does not descend into it either.
    if (::inotify_add_watch(inotify_.get(), sub.c_str(), kWatchMask) < 0 && errno != ENOTDIR &&
        errno != ENOENT) {
      ok = false;  // out of watches, say: never answer from a cache that is not watched
      break;
    }
  }
  ::closedir(dir);
  if (!ok) inotify_.Reset();
}

bool RootOnlyWatch::Changed() {
  bool changed = false;
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_.get(), buffer, sizeof buffer);
    if (n > 0) {
      changed = true;  // any event at all (IN_Q_OVERFLOW and IN_IGNORED included)
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) changed = true;  // cannot tell: assume the worst
    break;
  }
  pollfd p{mountinfo_.get(), POLLPRI, 0};
  const int ready = ::poll(&p, 1, 0);
  if (ready < 0 || (ready > 0 && (p.revents & (POLLPRI | POLLERR | POLLNVAL)) != 0)) {
    changed = true;
  }
  return changed;
}

std::vector<MountOp> RootOnlyWatch::Masks() {
  if (valid_ && inotify_ && !Changed()) return masks_;
  Rewatch();
  masks_ = BuildRootOnlyMasks(etc_);
  ++walks_;
  valid_ = static_cast<bool>(inotify_);
  return masks_;
}

namespace {

std::mutex g_mutex;
bool g_enabled = false;
std::unique_ptr<RootOnlyWatch> g_watch;

}  // namespace

void SetRootOnlyWatch(bool enabled) {
  std::lock_guard lock(g_mutex);
  g_enabled = enabled;
  if (!enabled) g_watch.reset();
}

std::vector<MountOp> RootOnlyMasks() {
  std::lock_guard lock(g_mutex);
  if (!g_enabled) return BuildRootOnlyMasks();
  if (!g_watch) {
    Result<std::unique_ptr<RootOnlyWatch>> watch = RootOnlyWatch::Create("/etc");
    if (!watch) return BuildRootOnlyMasks();  // no watch here: walk every time
    g_watch = *std::move(watch);
  }
  return g_watch->Masks();
}

#else  // inotify and /proc/self/mountinfo are Linux's: elsewhere every plan walks.

Result<std::unique_ptr<RootOnlyWatch>> RootOnlyWatch::Create(std::filesystem::path etc) {
  return Fail(ErrorCode::kUnavailable,
              "watching " + etc.string() + " needs inotify, which this platform lacks");
}
bool RootOnlyWatch::Changed() { return true; }
void RootOnlyWatch::Rewatch() { valid_ = false; }
std::vector<MountOp> RootOnlyWatch::Masks() {
  Rewatch();
  ++walks_;
  return BuildRootOnlyMasks(etc_);
}
void SetRootOnlyWatch(bool /*enabled*/) {}
std::vector<MountOp> RootOnlyMasks() { return BuildRootOnlyMasks(); }

#endif

}  // namespace cordon::plan
