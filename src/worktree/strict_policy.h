// Worktree mode's strict sandbox policy: the command may write the worktree and nothing else.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"
#include "worktree/detect.h"

namespace cordon::worktree {

// Forces mode workspace_write (whatever was configured, even off), drops every extra writable
// root and forces protect_git_metadata. Network stays as configured. Returns the writable
// roots that were dropped, so the caller can say so.
[[nodiscard]] std::vector<std::filesystem::path> ApplyStrictPolicy(Config& config);

// --unsafe or an explicit --mode other than workspace_write contradicts worktree mode: an
// error naming the flag (kInvalidArgument), rather than silently overriding what was typed.
[[nodiscard]] Result<void> CheckWorktreeFlags(bool unsafe, std::string_view mode_flag);

struct WorktreeMode {
  LinkedWorktree worktree;                           // the workspace is worktree.root
  std::vector<std::filesystem::path> dropped_roots;  // configured roots no longer writable
};

// What to tell the person about dropped roots ("" when none were configured).
std::string DroppedRootsNotice(const std::vector<std::filesystem::path>& dropped);

// Detects the linked worktree containing `start` and applies the strict policy to `config`.
[[nodiscard]] Result<WorktreeMode> EnterWorktreeMode(Config& config,
                                                     const std::filesystem::path& start);

}  // namespace cordon::worktree
