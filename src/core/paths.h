// Path canonicalisation. Sandboxes match real paths: /tmp, /var or a workspace may be symlinks,
// and a rule written for the link would not cover the target (or would cover the wrong one).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"

namespace cordon::core {

// realpath(3): absolute, no symlinks, no "." or "..". The path must exist (kNotFound otherwise).
[[nodiscard]] Result<std::filesystem::path> Canonical(const std::filesystem::path& path);

// Expands a leading "~" or "~/" using `home`; other paths are returned unchanged.
std::filesystem::path ExpandHome(std::string_view path, const std::filesystem::path& home);

// True when `path` equals `root` or lies beneath it. Both must be canonical.
bool IsWithin(const std::filesystem::path& path, const std::filesystem::path& root);
// True when `path` is within (IsWithin) any of `roots`.
bool IsWithinAny(const std::filesystem::path& path,
                 const std::vector<std::filesystem::path>& roots);
// The same on the paths' text (no fs::path to build).
bool IsWithinText(std::string_view path, std::string_view root);

// The entries of directory `dir` as full paths, sorted (so plans built from them are stable),
// "." and ".." left out. Empty when `dir` cannot be opened: callers scan the host's optional
// places (/run, /etc, a home), where a missing directory just means nothing to do.
std::vector<std::filesystem::path> ListDirectory(const std::filesystem::path& dir);

// The same with each entry's type as the directory records it (readdir's d_type, DT_UNKNOWN on
// file systems that record none): no stat per entry. nullopt when `dir` cannot be opened.
struct DirectoryEntry {
  std::string path;        // dir/name
  unsigned char type = 0;  // DT_DIR, DT_REG, DT_LNK, ..., DT_UNKNOWN
};
std::optional<std::vector<DirectoryEntry>> ListDirectoryTyped(const std::string& dir);

}  // namespace cordon::core
