// Detecting a linked git worktree (`git worktree add`): the workspace of worktree mode.
//
// A linked worktree's `.git` is a FILE "gitdir: <main>/.git/worktrees/<name>"; that git dir
// has a `commondir` file leading back to <main>/.git and a `gitdir` file naming the worktree's
// `.git` file. Every one of those is written by whoever can write the worktree, so detection
// trusts none of them alone: the paths are canonicalised and must agree with each other.
#pragma once

#include <filesystem>

#include "cordon/error.h"

namespace cordon::worktree {

struct LinkedWorktree {
  std::filesystem::path root;        // canonical top directory of the worktree
  std::filesystem::path git_file;    // root / ".git" (a regular file)
  std::filesystem::path git_dir;     // canonical <common>/worktrees/<name>
  std::filesystem::path common_dir;  // canonical git dir of the main repository
};

// Finds the worktree that contains `start` (itself or the nearest ancestor holding a `.git`
// entry, as git does) and checks it is a linked worktree. kInvalidArgument, with a message
// for a person, when it is not a git repository, is a main working tree, or its git files
// disagree.
[[nodiscard]] Result<LinkedWorktree> DetectLinkedWorktree(const std::filesystem::path& start);

}  // namespace cordon::worktree
