// The tools' cache directory of a run (plan/tool_caches.h, decision 0041), made on the host
// before planning: the only place cordon creates it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/config.h"

namespace cordon::session {

// The canonical directory to bind, made (0700, each missing component) if it is missing; for a
// workspace's own cache its path is written beside it. Empty when the config wants none
// (tool_caches off, or a mode other than workspace_write) or when it cannot be made here (no
// home, a read-only home, a directory of another user): the command's caches then live in its
// private HOME, as with off, and `cordon cache status` says why. Nothing is weakened either way.
std::filesystem::path PrepareToolCache(const SandboxConfig& config,
                                       const std::vector<std::string>& caller_env,
                                       const std::filesystem::path& caller_home,
                                       const std::filesystem::path& workspace);

}  // namespace cordon::session
