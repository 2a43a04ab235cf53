// Where the host-run files (config/host_run_files.h) of a set of writable roots are, as the
// planner binds them read-only (present) or keeps them from being created (absent). Pure apart
// from lstat of the candidate paths.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::plan {

struct HostRunPaths {
  std::vector<std::filesystem::path> present;  // files and directories, none of them a link
  std::vector<std::filesystem::path> absent;   // nothing there (or a parent is not a directory)
};

// Each entry of `entries` below each of `roots`. Fails (kUnavailable) when an entry, or a
// directory on the way to it, is a symbolic link: a bind would protect where the link points
// today, and the command could swap the link itself. The message names the path and both ways
// out (replace the link, or remove the entry from the list).
[[nodiscard]] Result<HostRunPaths> FindHostRunPaths(
    const std::vector<std::string>& entries, const std::vector<std::filesystem::path>& roots);

}  // namespace cordon::plan
