// `cordon git commit -m MESSAGE [--workspace DIR]`: commits every change in the workspace's
// working tree through git on the host, as the MCP tool git_commit does (worktree::CommitAll):
// repository hooks and the fsmonitor off, nested repositories refused — the files were written
// by sandboxed commands, whose .git stayed read-only. For harnesses that drive cordon from the
// command line, and for a person committing what an agent left.
#include <fmt/format.h>

#include <cstdio>

#include "cli/subcommands.h"
#include "core/paths.h"
#include "worktree/git_commit.h"

namespace cordon::cli {
namespace {

struct GitOptions {
  std::string message;
  std::string workspace;
};

int RunGitCommit(const GitOptions& options) {
  std::error_code ec;
  const std::filesystem::path where = options.workspace.empty()
                                          ? std::filesystem::current_path(ec)
                                          : std::filesystem::path(options.workspace);
  Result<std::filesystem::path> root = core::Canonical(where);
  if (ec || !root) {
    fmt::print(stderr, "cordon: git commit: {}\n", root ? ec.message() : root.error().message);
    return kExitSetupFailed;
  }
  if (!worktree::IsWorkingTreeTop(*root)) {
    fmt::print(stderr,
               "cordon: git commit: {} is not the top of a git working tree (no .git there); run "
               "it in the repository's top directory or name it with --workspace\n",
               root->string());
    return kExitSetupFailed;
  }
  Result<worktree::CommitOutcome> outcome = worktree::CommitAll(*root, options.message);
  if (!outcome) {
    fmt::print(stderr, "cordon: git commit: not committed: {}\n", outcome.error().message);
    return 1;
  }
  switch (outcome->status) {
    case worktree::CommitStatus::kEmptyMessage:
      fmt::print(stderr, "cordon: git commit: the message is empty; say what the change does\n");
      return kExitSetupFailed;
    case worktree::CommitStatus::kNothingToCommit:
      fmt::print(stderr, "cordon: git commit: nothing to commit in {}\n", root->string());
      return 1;
    case worktree::CommitStatus::kNestedRepository:
      fmt::print(stderr,
                 "cordon: git commit: not committed: {} is a nested git repository or "
                 "submodule, whose configuration sandboxed commands could change; commit it "
                 "yourself after checking it\n",
                 outcome->detail);
      return 1;
    case worktree::CommitStatus::kCommitted:
      break;
  }
  fmt::print("Committed {}\n{}\n", outcome->commit, outcome->summary);
  return 0;
}

}  // namespace

Subcommand AddGitCommand(CLI::App& root, const GlobalOptions&) {
  CLI::App* app =
      root.add_subcommand("git", "Git from the host for what sandboxed commands cannot do: commit");
  app->require_subcommand(1);
  auto options = std::make_shared<GitOptions>();
  CLI::App* commit = app->add_subcommand(
      "commit",
      "Commit every change in the working tree (git add -A; git commit) from the host, without "
      "repository hooks; the way to commit while .git is read-only in the sandbox");
  commit->add_option("-m,--message", options->message, "The commit message")->required();
  commit
      ->add_option("--workspace,-w", options->workspace,
                   "The top of the working tree (default: the current directory)")
      ->type_name("DIR");
  return {app, [options] { return RunGitCommit(*options); }};
}

}  // namespace cordon::cli
