#include "mcp/git_commit_tool.h"

#include <fmt/format.h>

#include <string>

#include "mcp/lifecycle.h"
#include "mcp/run_command_tool.h"
#include "worktree/git_commit.h"

namespace cordon::mcp {

using nlohmann::json;

json GitCommitTool(std::string_view protocol_version) {
  json tool = {
      {"name", std::string(kGitCommitTool)},
      {"description",
       "Commit every change in the workspace's git working tree (new, changed and deleted "
       "files: git add -A, then git commit) with the given message, on its current branch. "
       "Runs git outside the sandbox, where .git is writable (inside it is read-only: use this "
       "tool instead of git commit), without repository hooks. Returns the new commit id. "
       "Refused when the message is empty or there is nothing to commit."},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"message",
           {{"type", "string"},
            {"minLength", 1},
            {"description", "The commit message: a short summary line, optionally a body."}}}}},
        {"required", json::array({"message"})}}}};
  if (VersionAtLeast(protocol_version, "2025-03-26")) {
    tool["annotations"] = {{"title", "Commit the workspace's changes"},
                           {"readOnlyHint", false},
                           {"destructiveHint", false},
                           {"idempotentHint", false},
                           {"openWorldHint", false}};
  }
  if (VersionAtLeast(protocol_version, "2025-06-18")) {
    tool["title"] = "Commit (git)";
    tool["outputSchema"] = {
        {"type", "object"},
        {"properties",
         {{"commit", {{"type", "string"}, {"description", "The new commit's full id"}}},
          {"summary", {{"type", "string"}, {"description", "git commit's summary"}}}}},
        {"required", json::array({"commit", "summary"})}};
  }
  return tool;
}

json GitCommitCall(const json& arguments, const std::filesystem::path& root,
                   const CancelToken& cancel) {
  const auto message = arguments.find("message");
  if (message == arguments.end() || !message->is_string()) {
    return ToolErrorResult("Invalid git_commit arguments: 'message' (a string) is required");
  }
  worktree::GitRunOptions options;
  options.cancel_fd = cancel.fd();
  auto outcome = worktree::CommitAll(root, message->get_ref<const std::string&>(), options);
  if (!outcome) return ToolErrorResult(fmt::format("Not committed: {}", outcome.error().message));
  switch (outcome->status) {
    case worktree::CommitStatus::kEmptyMessage:
      return ToolErrorResult(
          "Not committed: the commit message is empty; give a message that "
          "says what the change does");
    case worktree::CommitStatus::kNothingToCommit:
      return ToolErrorResult(
          "Not committed: nothing to commit (git status lists no change in "
          "the working tree)");
    case worktree::CommitStatus::kNestedRepository:
      return ToolErrorResult(fmt::format(
          "Not committed: {} is a nested git repository or submodule. git would run inside it "
          "and read its configuration, which commands in the sandbox can change; cordon does not "
          "commit worktrees holding one. Remove it (or ask the person to commit).",
          outcome->detail));
    case worktree::CommitStatus::kCommitted:
      break;
  }
  return json{{"content", json::array({{{"type", "text"},
                                        {"text", fmt::format("Committed {}\n{}", outcome->commit,
                                                             outcome->summary)}}})},
              {"structuredContent", {{"commit", outcome->commit}, {"summary", outcome->summary}}},
              {"isError", false}};
}

}  // namespace cordon::mcp
