// Committing a working tree's changes on the host, for the MCP tool git_commit (every session
// whose .git the sandbox keeps read-only, and worktree mode) and `cordon git commit`.
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

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/config.h"
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
// `root`: the top of the working tree (a linked worktree, or the workspace of any session
// whose .git the sandbox keeps read-only: CommitRoot).
[[nodiscard]] Result<CommitOutcome> CommitAll(const std::filesystem::path& root,
                                              std::string_view message,
                                              const GitRunOptions& options = {});
inline Result<CommitOutcome> CommitAll(const LinkedWorktree& worktree, std::string_view message,
                                       const GitRunOptions& options = {}) {
  return CommitAll(worktree.root, message, options);
}

// Where a session on `workspace` may commit from the host: the workspace itself, when it is the
// top of a git working tree (a .git directory, or a .git file as a linked worktree or submodule
// has) and the sandbox keeps that .git read-only — workspace_write mode with
// protect_git_metadata on: then the git metadata the commit runs with was never the command's
// to change. nullopt otherwise.
std::optional<std::filesystem::path> CommitRoot(const SandboxConfig& config,
                                                const std::filesystem::path& workspace);

// Whether `dir` is the top of a git working tree: a .git directory with a HEAD (an empty one is
// a placeholder another run holds), or a .git file; never a .git that is a link.
bool IsWorkingTreeTop(const std::filesystem::path& dir);

}  // namespace cordon::worktree
