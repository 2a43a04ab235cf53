#include "worktree/strict_policy.h"

#include <fmt/format.h>

#include <utility>

namespace cordon::worktree {

std::vector<std::filesystem::path> ApplyStrictPolicy(Config& config) {
  config.sandbox.mode = SandboxMode::kWorkspaceWrite;
  config.sandbox.protect_git_metadata = true;
  std::vector<std::filesystem::path> dropped = std::move(config.sandbox.writable_roots);
  config.sandbox.writable_roots.clear();
  return dropped;
}

Result<void> CheckWorktreeFlags(bool unsafe, std::string_view mode_flag) {
  if (unsafe) {
    return Fail(ErrorCode::kInvalidArgument,
                "--unsafe contradicts --worktree (worktree mode always sandboxes in "
                "workspace_write)");
  }
  if (!mode_flag.empty() && mode_flag != "workspace_write") {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("--mode {} contradicts --worktree (worktree mode always sandboxes in "
                            "workspace_write)",
                            mode_flag));
  }
  return {};
}

std::string DroppedRootsNotice(const std::vector<std::filesystem::path>& dropped) {
  if (dropped.empty()) return {};
  std::string list;
  for (const auto& root : dropped) list += (list.empty() ? "" : ", ") + root.string();
  return fmt::format(
      "worktree mode: ignoring the configured writable roots ({}): the worktree "
      "is the only writable root",
      list);
}

Result<WorktreeMode> EnterWorktreeMode(Config& config, const std::filesystem::path& start) {
  CORDON_TRY(LinkedWorktree found, DetectLinkedWorktree(start));
  return WorktreeMode{std::move(found), ApplyStrictPolicy(config)};
}

}  // namespace cordon::worktree
