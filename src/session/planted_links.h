// A configured writable root reached through a symbolic link that a sandboxed command could
// have made: refused, never followed (decision 0033). A command can write inside the workspace
// and the other writable roots, so a link there (`cache -> ~`) is the command's choice, not the
// user's; following it at the next session would bind its target writable.
#pragma once

#include <filesystem>
#include <vector>

#include "cordon/error.h"

namespace cordon::session {

// Walks `configured` (absolute) component by component; fails naming the first symbolic link
// whose directory lies within one of `writable` (canonical paths), and what to name instead.
[[nodiscard]] Result<void> RefusePlantedLinks(const std::filesystem::path& configured,
                                              const std::vector<std::filesystem::path>& writable);

}  // namespace cordon::session
