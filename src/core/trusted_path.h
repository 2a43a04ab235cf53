// Whether a binary cordon runs with privilege over the sandbox (bubblewrap, its trampoline, the
// sandbox's init) could have been planted or replaced by someone else, the sandboxed command
// included.
#pragma once

#include <filesystem>
#include <vector>

#include "cordon/error.h"

namespace cordon::core {

// Ok when `path` (canonical) and each ancestor directory are owned by root or `owner_uid` and not
// writable by group or others (a sticky directory owned by root or the caller, such as /tmp,
// passes: nobody else can rename or remove what lies below it), and no writable root contains
// it. The error (kUnavailable) names the offending path and why.
[[nodiscard]] Result<void> CheckTrustedPath(
    const std::filesystem::path& path, unsigned owner_uid,
    const std::vector<std::filesystem::path>& writable_roots);

}  // namespace cordon::core
