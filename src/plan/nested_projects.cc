#include "plan/nested_projects.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "config/host_run_files.h"
#include "core/paths.h"
#include "core/syscall_error.h"

namespace cordon::plan {
namespace {

bool IsMarker(const std::vector<std::string>& markers, std::string_view name) {
  return std::binary_search(markers.begin(), markers.end(), name, std::less<>());
}

// Directories the search never enters: git's own, a package manager's, and one named like a
// marker (in the directory that holds it, a project, it is protected whole or holds entries
// that are; so are the placeholders cordon makes there, whose comings and goings must not
// count as changes).
bool Skipped(const std::vector<std::string>& markers, std::string_view name) {
  return name == "." || name == ".." || name == "node_modules" || IsMarker(markers, name);
}

class Search {
 public:
  Search(const std::filesystem::path& root, const std::vector<std::string>& markers,
         std::size_t depth, std::size_t max_directories, const BeforeRead& before_read)
      : root_(root),
        markers_(markers),
        depth_(depth),
        max_(max_directories),
        before_read_(before_read) {}

  // Reads the directory `fd` (owned) at `path`, `level` levels below the root.
  Result<void> Visit(int fd, const std::filesystem::path& path, std::size_t level) {
    if (scan_.directories.size() >= max_) {
      ::close(fd);
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("more than {} directories within {} levels of {}: too many to "
                              "search for nested projects (whose .git and host-run files are "
                              "protected) before every command. Lower nested_project_depth in the "
                              "sandbox section of your config (0: protect the top level only)",
                              max_, depth_, root_.string()));
    }
    if (before_read_) before_read_(path, level);
    scan_.directories.push_back(path);
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      ::close(fd);
      return core::FailSyscall("fdopendir", path.string());
    }
    std::vector<std::string> children;
    bool project = false;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string_view name = entry->d_name;
      if (level > 0 && IsMarker(markers_, name)) project = true;
      if (level >= depth_ || Skipped(markers_, name)) continue;
      bool directory = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {
        struct stat st {};
        directory = ::fstatat(::dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISDIR(st.st_mode);
      }
      if (directory) children.emplace_back(name);
    }
    if (project) scan_.projects.push_back(path);
    std::sort(children.begin(), children.end());
    Result<void> result;
    for (const std::string& name : children) {
      result = Child(::dirfd(dir), path / name, name, level + 1);
      if (!result) break;
    }
    ::closedir(dir);
    return result;
  }

  NestedScan Take() { return std::move(scan_); }

 private:
  Result<void> Child(int parent, const std::filesystem::path& path, const std::string& name,
                     std::size_t level) {
    const int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return Visit(fd, path, level);
    if (errno != EACCES) return {};  // gone, or replaced by a link or a file since listed
    // A directory of someone else's stays unreadable to the command too (it cannot change its
    // mode or move it elsewhere); one of the caller's, the command could open up.
    // (When even that cannot be told, the parent is not searchable: refused as well.)
    struct stat st {};
    const bool known = ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (known && st.st_uid != ::geteuid()) return {};
    if (!known && errno == ENOENT) return {};
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot search {} for nested projects (whose .git and host-run files "
                            "are protected): permission denied, and a command could make it "
                            "readable. Restore its mode (chmod u+rwx), or lower "
                            "nested_project_depth in the sandbox section of your config",
                            path.string()));
  }

  const std::filesystem::path& root_;
  const std::vector<std::string>& markers_;
  std::size_t depth_;
  std::size_t max_;
  const BeforeRead& before_read_;
  NestedScan scan_;
};

}  // namespace

std::vector<std::string> ProjectMarkers(const SandboxConfig& config) {
  std::vector<std::string> markers;
  if (config.mode != SandboxMode::kWorkspaceWrite) return markers;
  if (config.protect_git_metadata) markers.emplace_back(".git");
  for (const std::string& entry : config::HostRunFiles(config)) {
    markers.push_back(entry.substr(0, entry.find('/')));
  }
  std::sort(markers.begin(), markers.end());
  markers.erase(std::unique(markers.begin(), markers.end()), markers.end());
  return markers;
}

Result<NestedScan> ScanNestedProjects(const std::filesystem::path& root,
                                      const std::vector<std::string>& markers, std::size_t depth,
                                      std::size_t max_directories, const BeforeRead& before_read) {
  if (depth == 0 || markers.empty()) return NestedScan{};
  const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return core::FailSyscall("open", root.string());
  Search search(root, markers, depth, max_directories, before_read);
  CORDON_TRY_VOID(search.Visit(fd, root, 0));
  NestedScan scan = search.Take();
  std::sort(scan.projects.begin(), scan.projects.end());
  return scan;
}

Result<std::vector<std::filesystem::path>> NestedProjectsCache::Projects(
    const std::filesystem::path& root, const std::vector<std::string>& markers, std::size_t depth) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[root];
  // What could change the result: a marker coming or going in a directory that is not a
  // project yet (in a project or the root it changes nothing: a project stays one until the
  // next search, which protects more, never less — and cordon's own placeholders come and go
  // there), or a directory that the search would enter coming, going or changing mode.
  auto relevant = [&entry, &markers, depth](int wd, std::string_view name, bool directory) {
    const auto at = entry.watched.find(wd);
    if (at == entry.watched.end()) return true;
    const auto& [level, protected_already] = at->second;
    if (IsMarker(markers, name)) return !protected_already;
    return directory && level < depth;
  };
  if (entry.valid && entry.markers == markers && entry.depth == depth &&
      !entry.watch.Changed(relevant)) {
    return entry.projects;
  }
  entry.valid = entry.watch.Start();
  entry.watched.clear();
  std::vector<std::pair<int, std::filesystem::path>> watches;
  auto watch = [&](const std::filesystem::path& dir, std::size_t level) {
    const int wd = entry.watch.Watch(dir);
    if (wd < 0) entry.valid = false;  // not watched: not kept
    entry.watched[wd] = {level, level == 0};
    watches.emplace_back(wd, dir);
  };
  ++scans_;
  Result<NestedScan> scan = ScanNestedProjects(root, markers, depth, kMaxNestedDirectories, watch);
  if (!scan) {
    entry.valid = false;
    return std::unexpected(std::move(scan).error());
  }
  for (const auto& [wd, dir] : watches) {
    if (std::binary_search(scan->projects.begin(), scan->projects.end(), dir)) {
      entry.watched[wd].second = true;
    }
  }
  entry.markers = markers;
  entry.depth = depth;
  entry.projects = std::move(scan->projects);
  return entry.projects;
}

Result<std::vector<std::filesystem::path>> FindNestedProjects(
    const SandboxConfig& config, const std::vector<std::filesystem::path>& roots,
    NestedProjectsCache* cache) {
  std::vector<std::filesystem::path> projects;
  const std::vector<std::string> markers = ProjectMarkers(config);
  if (markers.empty() || config.nested_project_depth == 0) return projects;
  for (const std::filesystem::path& root : roots) {
    std::vector<std::filesystem::path> found;
    if (cache != nullptr) {
      CORDON_TRY(found, cache->Projects(root, markers, config.nested_project_depth));
    } else {
      CORDON_TRY(NestedScan scan, ScanNestedProjects(root, markers, config.nested_project_depth));
      found = std::move(scan.projects);
    }
    for (std::filesystem::path& project : found) {
      if (std::find(roots.begin(), roots.end(), project) != roots.end()) continue;
      projects.push_back(std::move(project));
    }
  }
  std::sort(projects.begin(), projects.end());
  projects.erase(std::unique(projects.begin(), projects.end()), projects.end());
  if (projects.size() > kMaxNestedProjects) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} projects nested below the writable roots (a directory holding "
                            ".git or a host-run entry, such as {}), more than the {} that cordon "
                            "protects per command: make a narrower directory the workspace, or "
                            "lower sandbox.nested_project_depth (now {}; 0 turns the search off)",
                            projects.size(), projects.front().string(), kMaxNestedProjects,
                            config.nested_project_depth));
  }
  return projects;
}

}  // namespace cordon::plan
