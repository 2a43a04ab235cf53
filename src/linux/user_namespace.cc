#include "linux/user_namespace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cordon::linux_native {
namespace {

StepResult WriteProcFile(const char* path, const char* text, Step step) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return StepFailed(step);
  std::size_t len = std::strlen(text);
  ssize_t n = ::write(fd, text, len);
  if (n != static_cast<ssize_t>(len)) {
    if (n >= 0) errno = EIO;
    StepResult r = StepFailed(step);
    ::close(fd);
    return r;
  }
  ::close(fd);
  return StepOk();
}

}  // namespace

StepResult WriteIdMaps(const ChildContext& c) {
  if (auto r = WriteProcFile("/proc/self/setgroups", "deny", Step::kSetgroups); r.failed()) {
    return r;
  }
  if (auto r = WriteProcFile("/proc/self/uid_map", c.uid_map, Step::kUidMap); r.failed()) {
    return r;
  }
  return WriteProcFile("/proc/self/gid_map", c.gid_map, Step::kGidMap);
}

}  // namespace cordon::linux_native
