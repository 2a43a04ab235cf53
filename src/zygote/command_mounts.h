// The per-command mount steps of the zygote path: what each command gets fresh on top of the
// session's shared mount view (ADR 0010). Computed in the parent from the LaunchPlan; replayed
// allocation-free by the command's init in its own copy of the session's mount namespace.
//
// For every private tmpfs of the plan (/tmp, /var/tmp) the command gets a new empty tmpfs in
// its place, so nothing a command writes there reaches the next one. What the plan mounted
// beneath such a tmpfs (a workspace under /tmp, with its read-only .git and masks) is first
// cloned recursively (open_tree) and re-attached on the new tmpfs (move_mount), and the
// plan's directories there (the private HOME) are made again. A /tmp that holds a root is an
// empty read-only view instead (plan/mount_ops.h): only the scratch tmpfs inside it is new.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "plan/launch_plan.h"

namespace cordon::zygote {

enum class CommandMountKind {
  kCloneTree,  // slot = open_tree(path, OPEN_TREE_CLONE | AT_RECURSIVE)
  kTmpfs,      // a new private tmpfs on path (plan's kTmpfs flags)
  kDirectory,  // mkdir(path, 0700)
  kAttach,     // mount point at path (directory or file, like the clone), move_mount(slot)
};

struct CommandMount {
  CommandMountKind kind;
  std::string path;
  int slot = -1;  // kCloneTree / kAttach: which cloned tree
  // kCloneTree: the plan's bind was optional (skipped in the session's view when missing):
  // a missing path then skips the tree instead of failing the command.
  bool optional = false;
};

// At most this many trees are cloned per command (a plan with more runs one-shot).
inline constexpr int kMaxClonedTrees = 32;

// The steps for `mounts`, or nullopt when the plan has a shape the per-command replay does not
// cover (then the command runs one-shot, never with less): a tmpfs nested in another mount, a
// bind beneath a tmpfs that precedes it, a hidden-path mask beneath a tmpfs that is not inside
// a re-attached tree, too many trees.
std::optional<std::vector<CommandMount>> PlanCommandMounts(
    const std::vector<plan::MountOp>& mounts);

}  // namespace cordon::zygote
