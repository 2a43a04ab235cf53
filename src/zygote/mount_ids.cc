#include "zygote/mount_ids.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/unique_fd.h"

namespace cordon::zygote {

std::optional<std::vector<std::uint64_t>> MountIds(int proc, pid_t pid) {
  const std::string name = std::to_string(pid) + "/mountinfo";
  core::UniqueFd fd(::openat(proc, name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::vector<std::uint64_t> ids;
  std::uint64_t id = 0;
  bool line_start = true;  // reading the ID at the start of a line
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c == '\n') {
        line_start = true;
        id = 0;
      } else if (line_start && c >= '0' && c <= '9') {
        id = id * 10 + static_cast<std::uint64_t>(c - '0');
      } else if (line_start) {
        ids.push_back(id);
        line_start = false;
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool StillMounted(const std::vector<std::uint64_t>& built, const std::vector<std::uint64_t>& now) {
  return std::includes(now.begin(), now.end(), built.begin(), built.end());
}

}  // namespace cordon::zygote
