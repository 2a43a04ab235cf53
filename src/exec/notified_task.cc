#include "exec/notified_task.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cstring>

namespace cordon::exec {

std::string ProcPath(pid_t tid, const char* name) {
  return "/proc/" + std::to_string(tid) + "/" + name;
}

bool ReadMemory(pid_t tid, std::uint64_t address, void* out, std::size_t len) {
  iovec local{out, len};
  iovec remote{reinterpret_cast<void*>(address), len};
  return ::process_vm_readv(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(len);
}

std::optional<std::string> ReadString(pid_t tid, std::uint64_t address) {
  constexpr std::uint64_t kPage = 4096;
  std::string text;
  char chunk[kPage];
  while (text.size() < PATH_MAX) {
    // Up to the end of the page `address` lies in: the next page may be unmapped.
    const std::size_t len = static_cast<std::size_t>(kPage - address % kPage);
    if (!ReadMemory(tid, address, chunk, len)) return std::nullopt;
    const void* nul = std::memchr(chunk, '\0', len);
    if (nul != nullptr) {
      text.append(chunk, static_cast<std::size_t>(static_cast<const char*>(nul) - chunk));
      return text;
    }
    text.append(chunk, len);
    address += len;
  }
  return std::nullopt;  // ENAMETOOLONG for the command
}

std::string ReadLinkPath(const std::string& path) {
  char link[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), link, sizeof link);
  if (n <= 0 || n >= static_cast<ssize_t>(sizeof link) || link[0] != '/') return {};
  return std::string(link, static_cast<std::size_t>(n));
}

core::UniqueFd OpenRoot(pid_t tid) {
  return core::UniqueFd(::open(ProcPath(tid, "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

}  // namespace cordon::exec
