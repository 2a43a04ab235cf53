#include "core/trusted_path.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/paths.h"
#include "core/syscall_error.h"

namespace cordon::core {

Result<void> CheckTrustedPath(const std::filesystem::path& path, unsigned owner_uid,
                              const std::vector<std::filesystem::path>& writable_roots) {
  for (const std::filesystem::path& root : writable_roots) {
    if (IsWithin(path, root)) {
      return Fail(
          ErrorCode::kUnavailable,
          fmt::format("{} lies in the writable root {}: a sandboxed command could replace it",
                      path.string(), root.string()));
    }
  }
  for (std::filesystem::path p = path;; p = p.parent_path()) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return FailSyscall("lstat", p.string());
    if (st.st_uid != 0 && st.st_uid != owner_uid) {
      return Fail(
          ErrorCode::kUnavailable,
          fmt::format("{} belongs to uid {}, neither root nor the caller", p.string(), st.st_uid));
    }
    // A sticky directory owned by root or the caller (/tmp, /var/tmp) lets others add entries
    // but not rename or remove the ones below it that the loop has already checked (owned by
    // root or the caller, not writable by others): the path cannot be swapped through it.
    const bool sticky_dir = p != path && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0;
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !sticky_dir) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("{} is writable by group or others (mode {:04o})", p.string(),
                              st.st_mode & 07777));
    }
    if (p == p.root_path()) break;
  }
  return {};
}

}  // namespace cordon::core
