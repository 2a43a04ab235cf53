#include "cli/mcp_log.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
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
  std::error_code ec;
  std::filesystem::create_directories(log.parent_path(), ec);
  if (ec) {
    return Fail(ErrorCode::kSystem,
                fmt::format("mkdir({}): {}", log.parent_path().string(), ec.message()), ec.value());
  }
  ::chmod(log.parent_path().c_str(), 0700);
  struct stat st {};
  if (::stat(log.c_str(), &st) == 0 && st.st_size >= kMaxLogBytes) {
    std::filesystem::path old = log;
    old += ".1";
    if (::rename(log.c_str(), old.c_str()) != 0) return SystemError("rename", log);
  }
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return SystemError("open", log);
  const std::string line =
      fmt::format("{:%Y-%m-%dT%H:%M:%SZ} cordon mcp (pid {}) in {}: {}\n",
                  std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()),
                  ::getpid(), dir.string(), message);
  // One write: O_APPEND keeps lines of servers that start at once whole.
  const ssize_t n = ::write(fd, line.data(), line.size());
  const int saved = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    errno = n < 0 ? saved : EIO;
    return SystemError("write", log);
  }
  return {};
}

}  // namespace cordon::cli
