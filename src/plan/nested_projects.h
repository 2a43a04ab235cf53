// Projects nested below a writable root (decision 0035): the directories, at most
// SandboxConfig::nested_project_depth levels down, that hold a `.git` or the first name of a
// host-run entry (".claude", ".vscode", ".mcp.json", ...). Their .git and host-run files are
// protected as a root's are, and each of them and the directories between it and its root is
// pinned (a mount point), so that no command can move a project out of the search's reach for
// a later command to find it unprotected.
//
// The search reads directories through descriptors, follows no symbolic link, and enters
// neither `.git`, nor `node_modules` (a package manager's, not a project the host works in),
// nor a directory named like a marker (protected whole, or holding what is, in its project). It is
// bounded: at most kMaxNestedDirectories directories are read and kMaxNestedProjects found, and
// more refuses the run, as does a
// directory of the caller's that it cannot read (the command could make it readable, and a project
// hidden in it writable). A long-lived session keeps the result while inotify reports nothing that
// could change it (NestedProjectsCache).
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"
#include "plan/directory_watch.h"

namespace cordon::plan {

inline constexpr std::size_t kMaxNestedDirectories = 10000;
// More nested projects than this refuses the run: each costs every command its binds, pins and
// up to 37 placeholders, and a command could make thousands for the next one to choke on.
inline constexpr std::size_t kMaxNestedProjects = 256;

// The names that make a directory a project under `config`: ".git" (protect_git_metadata) and
// the first name of each host-run entry (protect_host_run_files), sorted, without repeats.
// Empty outside workspace_write mode.
std::vector<std::string> ProjectMarkers(const SandboxConfig& config);

struct NestedScan {
  std::vector<std::filesystem::path> projects;     // sorted
  std::vector<std::filesystem::path> directories;  // read, in order (the root first)
};

// Called with each directory, and how many levels below the root it is, before it is read.
using BeforeRead = std::function<void(const std::filesystem::path& dir, std::size_t level)>;

// The projects below `root` (not `root` itself), at most `depth` levels down. `before_read`,
// when set, is called before each directory is read (a watch set there first reports a change
// made during the search).
// Fails (kUnavailable) when more than `max_directories` would be read, or when a directory the
// caller owns cannot be read; the message names the directory and the way out.
[[nodiscard]] Result<NestedScan> ScanNestedProjects(
    const std::filesystem::path& root, const std::vector<std::string>& markers, std::size_t depth,
    std::size_t max_directories = kMaxNestedDirectories, const BeforeRead& before_read = nullptr);

// A long-lived session's copies, one per root, each kept while its watch reports no event that
// could change it: a marker's name, or any directory created, removed or renamed (a directory
// could hold a project, or be one moved in). Thread-safe.
class NestedProjectsCache {
 public:
  Result<std::vector<std::filesystem::path>> Projects(const std::filesystem::path& root,
                                                      const std::vector<std::string>& markers,
                                                      std::size_t depth);
  std::size_t scans() const { return scans_; }  // for tests: how often a tree was searched

 private:
  struct Entry {
    DirectoryWatch watch;
    bool valid = false;
    std::vector<std::string> markers;
    std::size_t depth = 0;
    std::vector<std::filesystem::path> projects;
    // Per watch descriptor: the directory's level, and whether it is the root or a project.
    std::unordered_map<int, std::pair<std::size_t, bool>> watched;
  };
  std::mutex mutex_;
  std::map<std::filesystem::path, Entry> entries_;
  std::size_t scans_ = 0;
};

// The projects below each of `roots` that are not themselves one of `roots`, sorted, without
// repeats: through `cache` when there is one, else searched now.
[[nodiscard]] Result<std::vector<std::filesystem::path>> FindNestedProjects(
    const SandboxConfig& config, const std::vector<std::filesystem::path>& roots,
    NestedProjectsCache* cache);

}  // namespace cordon::plan
