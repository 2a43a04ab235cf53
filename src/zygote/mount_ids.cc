#include "zygote/mount_ids.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "core/unique_fd.h"
#include "linux/mount_id_scanner.h"

namespace cordon::zygote {

std::optional<std::vector<std::uint64_t>> MountIds(int proc, pid_t pid) {
  const std::string name = std::to_string(pid) + "/mountinfo";
  core::UniqueFd fd(::openat(proc, name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::vector<std::uint64_t> ids;
  linux_native::MountIdScanner scanner;
  char buffer[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    scanner.Feed(buffer, n, [&](unsigned long id) {
      ids.push_back(id);
      return true;
    });
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

bool StillMounted(const std::vector<std::uint64_t>& built, const std::vector<std::uint64_t>& now) {
  return std::includes(now.begin(), now.end(), built.begin(), built.end());
}

}  // namespace cordon::zygote
