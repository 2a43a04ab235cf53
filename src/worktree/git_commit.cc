#include "worktree/git_commit.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cordon::worktree {
namespace {

std::string_view Trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// A git step that must succeed; its stderr explains a failure.
Result<std::string> Step(const std::filesystem::path& root, std::vector<std::string> args,
                         const GitRunOptions& options) {
  const std::string name = fmt::format("git {}", args.front());
  CORDON_TRY(GitOutput output, RunGit(root, args, options));
  if (output.exit_code != 0) {
    std::string_view why = Trim(output.err);
    if (why.empty()) why = Trim(output.out);
    return Fail(ErrorCode::kSystem,
                fmt::format("{} failed (exit {}): {}", name, output.exit_code, why));
  }
  return std::move(output.out);
}

bool IsObjectId(std::string_view id) {
  if (id.size() != 40 && id.size() != 64) return false;
  return id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace

Result<CommitOutcome> CommitAll(const std::filesystem::path& root, std::string_view message,
                                const GitRunOptions& options) {
  if (Trim(message).empty()) return CommitOutcome{CommitStatus::kEmptyMessage, {}, {}};
  if (message.find('\0') != std::string_view::npos) {
    return Fail(ErrorCode::kInvalidArgument, "the commit message contains a NUL byte");
  }
  if (message.size() > kMaxCommitMessage) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("the commit message is {} bytes; at most {} are accepted",
                            message.size(), kMaxCommitMessage));
  }
  // --ignore-submodules=all: without it git status runs `git status` inside every submodule.
  // -z: paths verbatim and NUL-terminated; without it git quotes names with special characters
  // ("?? \"odd name/\""), which would hide a nested repository's trailing slash.
  CORDON_TRY(std::string status, Step(root,
                                      {"status", "--porcelain", "-z", "--untracked-files=all",
                                       "--ignore-submodules=all"},
                                      options));
  if (status.empty()) return CommitOutcome{CommitStatus::kNothingToCommit, {}, {}};
  // With --untracked-files=all git lists files, except an untracked nested repository, which
  // it shows as its directory ("?? dir/"). `git add -A` would run git inside it.
  for (std::string_view rest = status; !rest.empty();) {
    const auto end = rest.find('\0');
    const std::string_view entry = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (entry.size() < 3) continue;
    const std::string_view path = entry.substr(3);  // "XY path"
    if (path.ends_with('/')) {
      return CommitOutcome{CommitStatus::kNestedRepository, {}, {}, std::string(path)};
    }
    // A rename or copy is followed by its source path as a separate entry.
    if (entry[0] == 'R' || entry[0] == 'C' || entry[1] == 'R' || entry[1] == 'C') {
      const auto next = rest.find('\0');
      rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
    }
  }
  CORDON_TRY(std::string staged, Step(root, {"ls-files", "--stage", "-z"}, options));
  for (std::string_view rest = staged; !rest.empty();) {
    const auto end = rest.find('\0');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (line.starts_with("160000 ")) {
      const auto tab = line.find('\t');
      return CommitOutcome{
          CommitStatus::kNestedRepository,
          {},
          {},
          std::string(tab == std::string_view::npos ? line : line.substr(tab + 1))};
    }
  }

  CORDON_TRY_VOID(Step(root, {"add", "-A"}, options));
  CORDON_TRY(std::string summary,
             Step(root, {"commit", "--no-verify", "-m", std::string(message)}, options));
  CORDON_TRY(std::string head, Step(root, {"rev-parse", "--verify", "HEAD"}, options));
  const std::string_view id = Trim(head);
  if (!IsObjectId(id)) {
    return Fail(ErrorCode::kInternal,
                fmt::format("git rev-parse HEAD printed '{}', not a commit id", id));
  }
  return CommitOutcome{CommitStatus::kCommitted, std::string(id), std::string(Trim(summary))};
}

std::optional<std::filesystem::path> CommitRoot(const SandboxConfig& config,
                                                const std::filesystem::path& workspace) {
  if (config.mode != SandboxMode::kWorkspaceWrite || !config.protect_git_metadata ||
      !IsWorkingTreeTop(workspace)) {
    return std::nullopt;
  }
  return workspace;
}

bool IsWorkingTreeTop(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat((dir / ".git").c_str(), &st) != 0) return false;
  if (S_ISREG(st.st_mode)) return true;
  return S_ISDIR(st.st_mode) && ::lstat((dir / ".git/HEAD").c_str(), &st) == 0;
}

}  // namespace cordon::worktree
