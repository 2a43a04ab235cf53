#include "server/paths.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/syscall_error.h"

namespace cordon::server {

ServerPaths DefaultServerPaths(const std::optional<std::string>& runtime_dir) {
  ServerPaths paths;
  struct stat st {};
  const bool ours_or_absent =
      runtime_dir && ::lstat(runtime_dir->c_str(), &st) != 0
          ? errno == ENOENT
          : S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 022) == 0;
  if (runtime_dir && !runtime_dir->empty() && runtime_dir->front() == '/' && ours_or_absent) {
    paths.directory = std::filesystem::path(*runtime_dir) / "cordon";
  } else {
    paths.directory = fmt::format("/tmp/cordon-{}", ::geteuid());
  }
  paths.socket = paths.directory / "run.sock";
  paths.lock = paths.directory / "server.lock";
  return paths;
}

Result<void> CheckDirectory(const std::filesystem::path& directory, bool create) {
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) {
    if (errno != ENOENT) return core::FailSyscall("lstat", directory.string());
    if (!create) {
      return Fail(ErrorCode::kNotFound,
                  fmt::format("run server directory {} does not exist", directory.string()));
    }
    if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST) {
      return core::FailSyscall("mkdir", directory.string() + ", 0700");
    }
    if (::lstat(directory.c_str(), &st) != 0) return core::FailSyscall("lstat", directory.string());
  }
  if (!S_ISDIR(st.st_mode)) {
    return Fail(
        ErrorCode::kUnavailable,
        fmt::format("run server directory {} is not a directory (a symlink?)", directory.string()));
  }
  if (st.st_uid != ::geteuid()) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("run server directory {} belongs to uid {}, not to this user ({})",
                            directory.string(), st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("run server directory {} has mode {:o}; others must have no access "
                            "(chmod 700 it)",
                            directory.string(), st.st_mode & 07777));
  }
  return {};
}

}  // namespace cordon::server
