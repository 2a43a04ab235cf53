// Replacing a small file so that a reader (or a crash) sees either the old content or the new,
// never a mix, an empty file or a half-written one.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string_view>

#include "cordon/error.h"

namespace cordon::config {

// 1. create missing parent directories with mode 0700 (mkdir);
// 2. write `content` to a new temporary file in the target's directory (mkostemp: O_CREAT |
//    O_EXCL | O_CLOEXEC, mode 0600), fsync it;
// 3. rename it over `path` (atomic within one filesystem, hence the same directory);
// 4. fsync the directory so the rename itself survives a crash.
// On any failure before the rename the temporary file is removed and `path` is untouched.
// When `path` is a symlink to an existing file, that file is replaced (dotfile managers link
// config files; replacing the link with a plain file would silently detach it).
// Errors are kSystem and name the call and the path: "rename(/a/.tmp, /a/config.json): ...".
[[nodiscard]] Result<void> WriteFileAtomic(const std::filesystem::path& path,
                                           std::string_view content);

// mkdir -p with mode 0700 for each directory it creates. Existing directories are left as they
// are.
[[nodiscard]] Result<void> CreatePrivateDirectories(const std::filesystem::path& dir);

}  // namespace cordon::config
