#include "cli/mcp_log.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cordon::cli {
namespace {

constexpr off_t kMaxLogBytes = 1 << 20;

Result<void> SystemError(std::string_view call, const std::filesystem::path& path) {
  const int saved = errno;
  return Fail(ErrorCode::kSystem,
              fmt::format("{}({}): {}", call, path.string(), std::strerror(saved)), saved);
}

// One line per server: control characters in a path or a config's text are written as \xNN,
// so they can neither start a line of their own nor drive a terminal that shows the log.
std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::optional<std::filesystem::path> McpLogPath() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && state[0] == '/') {
    return std::filesystem::path(state) / "cordon/mcp.log";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    return std::filesystem::path(home) / ".local/state/cordon/mcp.log";
  }
  return std::nullopt;
}

Result<void> AppendMcpLog(const std::filesystem::path& log, const std::filesystem::path& dir,
                          std::string_view message) {
  const std::filesystem::path parent = log.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return Fail(ErrorCode::kSystem, fmt::format("mkdir({}): {}", parent.string(), ec.message()),
                ec.value());
  }
  // The directory and the file by descriptor, neither through a symlink, the file a regular one
  // of ours (a FIFO there would hang the server's start): a planted link cannot turn the log
  // into a write, or a chmod, somewhere else.
  const int dir_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return SystemError("open", parent);
  ::fchmod(dir_fd, 0700);
  const std::string name = log.filename().string();
  const std::string old_name = name + ".1";
  int fd = -1;
  for (int attempt = 0; attempt < 3; ++attempt) {
    fd = ::openat(dir_fd, name.c_str(),
                  O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) break;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
      ::close(fd);
      ::close(dir_fd);
      errno = EPERM;
      return SystemError("open (not a regular file of this user)", log);
    }
    // Servers that start at once: under the lock, the one that finds the log full moves it
    // aside; one that finds the name moved on meanwhile opens the new file.
    ::flock(fd, LOCK_EX);
    struct stat named {};
    if (::fstatat(dir_fd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        named.st_ino != st.st_ino || named.st_dev != st.st_dev) {
      ::close(fd);
      fd = -1;
      continue;
    }
    if (named.st_size < kMaxLogBytes || attempt == 2) break;  // ours to append to
    ::renameat(dir_fd, name.c_str(), dir_fd, old_name.c_str());
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) {
    Result<void> failed = SystemError("open", log);
    ::close(dir_fd);
    return failed;
  }
  ::close(dir_fd);
  const std::string line =
      fmt::format("{:%Y-%m-%dT%H:%M:%SZ} cordon mcp (pid {}) in {}: {}\n",
                  std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()),
                  ::getpid(), Printable(dir.string()), Printable(message));
  // One write: O_APPEND keeps lines of servers that start at once whole.
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int saved = errno;
  ::close(fd);  // and the lock
  if (n != static_cast<ssize_t>(line.size())) {
    errno = n < 0 ? saved : EIO;
    return SystemError("write", log);
  }
  return {};
}

}  // namespace cordon::cli
