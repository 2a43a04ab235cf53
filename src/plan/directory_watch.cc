#include "plan/directory_watch.h"

#include <fcntl.h>
#include <poll.h>
#if defined(__linux__)
#include <sys/inotify.h>
#endif
#include <unistd.h>

#include <cerrno>

namespace cordon::plan {
#if defined(__linux__)
namespace {

// Whatever can change what a path names or who may read it; content writes do not matter.
constexpr std::uint32_t kWatchMask = IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                                     IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW |
                                     IN_ONLYDIR;

}  // namespace

bool DirectoryWatch::Start() {
  // The mount table: poll() reports POLLPRI once it changed after this open (proc(5)); a fresh
  // descriptor forgets the changes the previous scan already saw.
  mountinfo_.Reset(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  inotify_.Reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!mountinfo_ || !inotify_) {
    inotify_.Reset();
    return false;
  }
  return true;
}

bool DirectoryWatch::Add(const std::filesystem::path& dir) { return Watch(dir) >= 0; }

int DirectoryWatch::Watch(const std::filesystem::path& dir) {
  return inotify_ ? ::inotify_add_watch(inotify_.get(), dir.c_str(), kWatchMask) : -1;
}

bool DirectoryWatch::Changed() { return Changed(nullptr); }

bool DirectoryWatch::Changed(const Relevant& relevant) {
  if (!inotify_ || !mountinfo_) return true;
  bool changed = false;
  alignas(inotify_event) char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(inotify_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) changed = true;  // cannot tell: assume the worst
    if (n <= 0) break;
    if (!relevant) {
      changed = true;  // any event at all (IN_Q_OVERFLOW and IN_IGNORED included)
      continue;
    }
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      const std::string_view name =
          event->len > 0 ? std::string_view(event->name) : std::string_view();
      if (name.empty() || relevant(event->wd, name, (event->mask & IN_ISDIR) != 0)) changed = true;
    }
  }
  pollfd p{mountinfo_.get(), POLLPRI, 0};
  const int ready = ::poll(&p, 1, 0);
  if (ready < 0 || (ready > 0 && (p.revents & (POLLPRI | POLLERR | POLLNVAL)) != 0)) {
    changed = true;
  }
  return changed;
}

#else  // inotify is Linux's: elsewhere nothing is ever known unchanged.

bool DirectoryWatch::Start() { return false; }
bool DirectoryWatch::Add(const std::filesystem::path&) { return false; }
int DirectoryWatch::Watch(const std::filesystem::path&) { return -1; }
bool DirectoryWatch::Changed() { return true; }
bool DirectoryWatch::Changed(const Relevant&) { return true; }

#endif
}  // namespace cordon::plan
