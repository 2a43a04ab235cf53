// Where the host-run files (config/host_run_files.h) of a set of writable roots are, as the
// planner binds them read-only (present) or has them held by a placeholder (absent). Pure apart
// from lstat of the candidate paths.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

struct HostRunPaths {
  std::vector<std::filesystem::path> present;  // files and directories, none of them a link
  std::vector<Placeholder> absent;             // to be held by a placeholder for the run
};

// Each entry of `entries` below each of `roots`. An entry is absent when nothing is there or
// only a placeholder a run of cordon made (a link to kPlaceholderLinkTarget, an empty directory
// with mode kPlaceholderDirectoryMode): another run's, or one a killed run left. When a
// directory on the way is not a directory (".clinerules" a file, for ".clinerules/hooks/"),
// that file is what is present: read-only, it cannot become a directory with the entry in it.
// Fails (kUnavailable) when an entry, or a directory on the way to it, is any other symbolic
// link: a bind would protect where the link points today, and the command could swap the link
// itself. The message names the path and both ways out (replace the link, or remove the entry
// from the list).
[[nodiscard]] Result<HostRunPaths> FindHostRunPaths(
    const std::vector<std::string>& entries, const std::vector<std::filesystem::path>& roots);

// Whether `path` is a placeholder a run of cordon made (see above). No symlink is followed.
bool IsPlaceholder(const std::filesystem::path& path);
// The same for the entry as `st` (its lstat) showed it. One that is gone by the time it is
// looked into (a placeholder another run removed meanwhile) counts as one: it is absent now.
bool IsPlaceholder(const std::filesystem::path& path, const struct stat& st);

// The directories on the way to each placeholder (".github" for ".github/hooks"), outermost
// first, each once: pinned for the command (bound onto themselves, writable) so that none can
// be renamed away and made again with an entry of the command's own in it.
std::vector<std::filesystem::path> PlaceholderParents(const std::vector<Placeholder>& placeholders);

// What a backend does, in order, for a command's placeholders: a pin of each of their
// PlaceholderParents, then each placeholder's read-only cover.
struct PlaceholderCover {
  std::filesystem::path path;
  bool directory = false;
  bool pin = false;  // a parent, bound onto itself writable; else the placeholder, read-only
};
std::vector<PlaceholderCover> PlaceholderCovers(const std::vector<Placeholder>& placeholders);

// Where the command finds git's global ignore file (its private HOME: git reads
// $HOME/.config/git/ignore), and what it says: the placeholders' names at any depth, so that a
// `git status` in the sandbox does not list them as untracked files. Empty text: none needed.
inline constexpr const char* kPlaceholderGitIgnore = ".config/git/ignore";
std::string PlaceholderGitIgnore(const std::vector<Placeholder>& placeholders);

}  // namespace cordon::plan
