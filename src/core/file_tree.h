// Walks a directory tree that a sandboxed command may have written (a tool cache): never
// following a symbolic link, each directory opened relative to its parent's descriptor, so a
// link or a renamed directory placed during the walk leads nowhere outside the tree.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::core {

// The names in the directory `fd` refers to ("." and ".." left out); `shown` names it in an
// error.
[[nodiscard]] Result<std::vector<std::string>> DirectoryNames(int fd,
                                                              const std::filesystem::path& shown);

// The space the tree below `dir` takes (allocated blocks), `dir` itself not counted.
[[nodiscard]] Result<std::uint64_t> TreeSize(const std::filesystem::path& dir);

// Removes everything inside the directory `dir`, keeping `dir` itself (it may be bound into a
// running sandbox). Read-only directories (go's module cache) are made writable by their owner
// first. An entry that vanished meanwhile is not an error. Returns the space freed.
[[nodiscard]] Result<std::uint64_t> RemoveTreeContents(const std::filesystem::path& dir);

}  // namespace cordon::core
