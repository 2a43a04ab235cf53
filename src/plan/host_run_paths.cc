#include "plan/host_run_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <string_view>

#include "core/unique_fd.h"

namespace cordon::plan {
namespace {

enum class Found { kPresent, kAbsent, kLink };

bool EmptyDirectory(const std::filesystem::path& path) {
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  // Gone since it was looked at: a placeholder another run removed meanwhile (the entry is
  // absent now, which is what the caller then plans for).
  if (!fd) return errno == ENOENT;
  DIR* dir = ::fdopendir(fd.Release());
  if (dir == nullptr) return false;
  bool empty = true;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") {
      empty = false;
      break;
    }
  }
  ::closedir(dir);
  return empty;
}

// lstat of each component of `relative` below `root`, stopping at the first that is missing,
// a placeholder, a link, or (before the last) not a directory. `at` is set to the path
// examined last.
Found Walk(const std::filesystem::path& root, const std::filesystem::path& relative,
           std::filesystem::path& at) {
  at = root;
  const auto end = relative.end();
  for (auto it = relative.begin(); it != end; ++it) {
    at /= *it;
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0) return Found::kAbsent;  // ENOENT, ENOTDIR, EACCES
    if (IsPlaceholder(at, st)) return Found::kAbsent;
    if (S_ISLNK(st.st_mode)) return Found::kLink;
    if (std::next(it) == end) return Found::kPresent;
    if (!S_ISDIR(st.st_mode)) return Found::kPresent;  // read-only, it stays a file
  }
  return Found::kAbsent;
}

}  // namespace

bool IsPlaceholder(const std::filesystem::path& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) {
    return (st.st_mode & 07777) == kPlaceholderDirectoryMode && EmptyDirectory(path);
  }
  if (!S_ISLNK(st.st_mode)) return false;
  char target[128];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
  // Gone between the lstat and here: a placeholder link another run removed meanwhile. Absent
  // now; whatever is made there next is looked at again when the run holds its placeholders.
  if (n < 0 && errno == ENOENT) return true;
  const std::size_t expected = std::strlen(kPlaceholderLinkTarget);
  return n == static_cast<ssize_t>(expected) &&
         std::memcmp(target, kPlaceholderLinkTarget, expected) == 0;
}

bool IsPlaceholder(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && IsPlaceholder(path, st);
}

std::vector<std::filesystem::path> PlaceholderParents(
    const std::vector<Placeholder>& placeholders) {
  std::vector<std::filesystem::path> parents;
  for (const Placeholder& p : placeholders) {
    std::filesystem::path at = p.root;
    const std::filesystem::path relative = p.relative;
    for (const auto& part : relative.parent_path()) {
      at /= part;
      parents.push_back(at);
    }
  }
  std::sort(parents.begin(), parents.end());
  parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
  return parents;
}

std::vector<PlaceholderCover> PlaceholderCovers(const std::vector<Placeholder>& placeholders) {
  std::vector<PlaceholderCover> covers;
  for (std::filesystem::path& parent : PlaceholderParents(placeholders)) {
    covers.push_back({std::move(parent), true, true});
  }
  for (const Placeholder& p : placeholders) covers.push_back({p.path(), p.directory, false});
  return covers;
}

std::string PlaceholderGitIgnore(const std::vector<Placeholder>& placeholders) {
  std::string text;
  for (const Placeholder& p : placeholders) {
    if (p.relative == ".git") continue;  // never listed by git
    // One name matches at any depth; a path with a slash only from the top, unless "**/".
    text += p.relative.find('/') == std::string::npos ? p.relative : "**/" + p.relative;
    text += '\n';
  }
  if (!text.empty()) text = "# cordon's placeholders (docs/host-run-files.md)\n" + text;
  return text;
}

Result<HostRunPaths> FindHostRunPaths(const std::vector<std::string>& entries,
                                      const std::vector<std::filesystem::path>& roots) {
  HostRunPaths paths;
  for (const std::filesystem::path& root : roots) {
    for (const std::string& spelled : entries) {
      std::string_view entry = spelled;
      const bool directory = entry.ends_with('/');
      while (entry.size() > 1 && entry.back() == '/') entry.remove_suffix(1);
      std::filesystem::path at;
      switch (Walk(root, entry, at)) {
        case Found::kPresent:
          paths.present.push_back(at);
          break;
        case Found::kAbsent:
          paths.absent.push_back({root, std::string(entry), directory});
          break;
        case Found::kLink:
          return Fail(ErrorCode::kUnavailable,
                      fmt::format("cannot keep {} read-only: {} is a symbolic link, which the "
                                  "command could replace (protect_host_run_files keeps the files a "
                                  "host program runs read-only in every writable root). Replace "
                                  "the link with what it points to, or leave the entry writable: "
                                  "\"host_run_files\": {{\"remove\": [\"{}\"]}} in the sandbox "
                                  "section of your config",
                                  (root / entry).string(), at.string(), entry));
      }
    }
  }
  return paths;
}

}  // namespace cordon::plan
