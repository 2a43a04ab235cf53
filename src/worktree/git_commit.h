// Committing a linked worktree's changes on the host, for the MCP tool git_commit.
//
//   git status --porcelain --ignore-submodules=all
//                                   nothing listed: nothing to commit, refused;
//                                   a nested repository ("?? dir/"): refused
//   git ls-files --stage            a gitlink (mode 160000, a submodule): refused
//   git add -A
//   git commit --no-verify -m MESSAGE
//   git rev-parse HEAD              the new commit id
//
// Each through RunGit (hooks and fsmonitor disabled, minimal environment, argv only).
// Residual risk (docs/mcp.md): a .gitattributes written by the sandboxed command may name a
// clean/smudge filter that the person configured globally (git-lfs, say); `git add` runs it.
#pragma once

#include <string>
#include <string_view>

#include "cordon/error.h"
#include "worktree/detect.h"
#include "worktree/git_runner.h"

namespace cordon::worktree {

enum class CommitStatus {
  kCommitted,
  kEmptyMessage,     // the message is empty or blank: nothing was run
  kNothingToCommit,  // git status lists no change: nothing was committed
  // The worktree holds a submodule (gitlink) or a nested repository (`detail` names it): git
  // would run git inside it, reading that repository's config — which the sandboxed command
  // could write, and which can name programs (filters, fsmonitor) git runs on the host.
  kNestedRepository,
};

struct CommitOutcome {
  CommitStatus status = CommitStatus::kCommitted;
  std::string commit;   // kCommitted: the full id of the new commit
  std::string summary;  // kCommitted: git commit's own summary line(s)
  std::string detail;   // kNestedRepository: the path of the nested repository or submodule
};

// Longest message accepted (git itself has no small limit; this keeps argv sane).
inline constexpr std::size_t kMaxCommitMessage = 64 * 1024;

// kInvalidArgument for a message with a NUL byte or longer than kMaxCommitMessage; an error
// with git's stderr when a git step fails.
[[nodiscard]] Result<CommitOutcome> CommitAll(const LinkedWorktree& worktree,
                                              std::string_view message,
                                              const GitRunOptions& options = {});

}  // namespace cordon::worktree
