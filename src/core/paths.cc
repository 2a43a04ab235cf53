#include "core/paths.h"

#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "core/syscall_error.h"

namespace cordon::core {

Result<std::filesystem::path> Canonical(const std::filesystem::path& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    Error error = SyscallError("realpath", path.string());
    if (error.errno_value == ENOENT || error.errno_value == ENOTDIR) {
      error.code = ErrorCode::kNotFound;
    }
    return std::unexpected(std::move(error));
  }
  return std::filesystem::path(buffer);
}

std::filesystem::path ExpandHome(std::string_view path, const std::filesystem::path& home) {
  if (path == "~") return home;
  if (path.starts_with("~/")) return home / std::filesystem::path(path.substr(2));
  return std::filesystem::path(path);
}

bool IsWithin(const std::filesystem::path& path, const std::filesystem::path& root) {
  return IsWithinText(path.native(), root.native());
}

bool IsWithinAny(const std::filesystem::path& path,
                 const std::vector<std::filesystem::path>& roots) {
  return std::any_of(roots.begin(), roots.end(),
                     [&](const std::filesystem::path& root) { return IsWithin(path, root); });
}

bool IsWithinText(std::string_view p, std::string_view r) {
  if (r == "/") return !p.empty() && p.front() == '/';
  if (!p.starts_with(r)) return false;
  return p.size() == r.size() || p[r.size()] == '/';
}

std::vector<std::filesystem::path> ListDirectory(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths;
  if (auto entries = ListDirectoryTyped(dir.native())) {
    paths.reserve(entries->size());
    for (DirectoryEntry& entry : *entries) paths.emplace_back(std::move(entry.path));
  }
  return paths;
}

std::optional<std::vector<DirectoryEntry>> ListDirectoryTyped(const std::string& dir) {
  std::vector<DirectoryEntry> entries;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return std::nullopt;
  const std::string prefix = dir.ends_with('/') ? dir : dir + '/';
  while (const dirent* entry = ::readdir(d)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") entries.push_back({prefix + std::string(name), entry->d_type});
  }
  ::closedir(d);
  std::sort(entries.begin(), entries.end(),
            [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.path < b.path; });
  return entries;
}

}  // namespace cordon::core
