// The MCP side of git_commit (src/mcp/git_commit_tool): its tools/list entry and the tool
// results it returns, against a real repository and linked worktree.
#include "mcp/git_commit_tool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "repo_fixture.h"
#include "worktree/detect.h"

namespace cordon::mcp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using worktree::testing::RepoFixture;

class GitCommitCallTest : public RepoFixture {
 protected:
  json Call(const json& arguments) {
    auto found = worktree::DetectLinkedWorktree(linked_);
    EXPECT_TRUE(found) << found.error().message;
    return GitCommitCall(arguments, found.value_or(worktree::LinkedWorktree{}).root, *cancel_);
  }
  std::shared_ptr<CancelToken> cancel_ = CancelToken::Create();
};

TEST_F(GitCommitCallTest, ReturnsTheCommitIdAndSummaryAsStructuredContent) {
  Write(linked_ / "new.txt", "new\n");
  const json result = Call({{"message", "Add new.txt"}});
  EXPECT_EQ(result["isError"], false);
  const std::string commit = result["structuredContent"]["commit"];
  EXPECT_EQ(commit, GitOut(main_, "rev-parse feature"));
  EXPECT_THAT(result["structuredContent"]["summary"].get<std::string>(), HasSubstr("Add new.txt"));
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr(commit));
}

TEST_F(GitCommitCallTest, RefusesAnEmptyMessageAsAToolError) {
  Write(linked_ / "new.txt", "new\n");
  const json result = Call({{"message", "  "}});
  EXPECT_EQ(result["isError"], true);
  EXPECT_FALSE(result.contains("structuredContent"));
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("message is empty"));
}

TEST_F(GitCommitCallTest, RefusesNothingToCommitAsAToolError) {
  const json result = Call({{"message", "Nothing"}});
  EXPECT_EQ(result["isError"], true);
  EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("nothing to commit"));
}

TEST_F(GitCommitCallTest, RefusesAMissingOrMistypedMessage) {
  Write(linked_ / "new.txt", "new\n");
  for (const json& arguments : {json::object(), json{{"message", 42}}}) {
    const json result = Call(arguments);
    EXPECT_EQ(result["isError"], true);
    EXPECT_THAT(result["content"][0]["text"].get<std::string>(), HasSubstr("'message'"));
  }
  EXPECT_EQ(GitOut(main_, "rev-list --count feature"), "1");
}

TEST_F(GitCommitCallTest, ACancelledCallCommitsNothing) {
  Write(linked_ / "new.txt", "new\n");
  cancel_->Cancel();
  const json result = Call({{"message", "Cancelled"}});
  EXPECT_EQ(result["isError"], true);
  EXPECT_EQ(GitOut(main_, "rev-list --count feature"), "1");
}

TEST(GitCommitTool, RequiresAMessageAndDeclaresItsOutputFromTheVersionsThatHaveOne) {
  const json modern = GitCommitTool("2025-06-18");
  EXPECT_EQ(modern["name"], "git_commit");
  EXPECT_EQ(modern["inputSchema"]["required"], json::array({"message"}));
  EXPECT_EQ(modern["outputSchema"]["required"], json::array({"commit", "summary"}));
  const json old = GitCommitTool("2024-11-05");
  EXPECT_FALSE(old.contains("outputSchema"));
  EXPECT_FALSE(old.contains("annotations"));
}

}  // namespace
}  // namespace cordon::mcp
