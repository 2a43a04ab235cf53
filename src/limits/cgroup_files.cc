#include "limits/cgroup_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <charconv>

#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::limits {

Result<std::string> ReadSmallFile(const std::filesystem::path& path) {
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return core::FailSyscall("open", path.string());
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::FailSyscall("read", path.string());
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > (1u << 20)) break;  // cgroup.procs of a fork bomb: enough to act on
  }
  return text;
}

Result<void> WriteSmallFile(const std::filesystem::path& path, std::string_view text) {
  core::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return core::FailSyscall("open", fmt::format("{}, O_WRONLY", path.string()));
  ssize_t n;
  do {
    n = ::write(fd.get(), text.data(), text.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return core::FailSyscall("write", fmt::format("{}, \"{}\"", path.string(), text));
  return {};
}

std::optional<std::uint64_t> KeyedValue(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') {
      continue;
    }
    std::string_view digits = line.substr(key.size() + 1);
    std::uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc()) return value;
  }
  return std::nullopt;
}

std::string RandomSuffix() {
  std::uint64_t bits = 0;
#if defined(__linux__)
  const bool random = ::getrandom(&bits, sizeof bits, 0) == static_cast<ssize_t>(sizeof bits);
#else
  const bool random = ::getentropy(&bits, sizeof bits) == 0;  // macOS: no getrandom
#endif
  if (!random) {
    bits = static_cast<std::uint64_t>(::getpid()) << 20 ^ reinterpret_cast<std::uintptr_t>(&bits);
  }
  return fmt::format("{:016x}", bits);
}

}  // namespace cordon::limits
