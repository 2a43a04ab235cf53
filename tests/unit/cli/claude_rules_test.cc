// Claude Code's Bash permission rules as the hook applies them to the model's command
// (cli/claude_rules.h): each rule form, on the whole text and on each simple command in it.
#include "cli/claude_rules.h"

#include <gtest/gtest.h>

namespace cordon::cli {
namespace {

using nlohmann::json;

bool Denies(const std::string& rule, const std::string& command) {
  return MatchingRule({rule}, command).has_value();
}

TEST(ClaudeRules, EachRuleFormMatchesWhatItSaysAndNoMore) {
  EXPECT_TRUE(Denies("Bash(git push)", "git push"));
  EXPECT_FALSE(Denies("Bash(git push)", "git push origin main"));
  EXPECT_TRUE(Denies("Bash(git push:*)", "git push origin main"));
  EXPECT_TRUE(Denies("Bash(git push:*)", "git push"));
  EXPECT_FALSE(Denies("Bash(git push:*)", "git pushed"));
  EXPECT_FALSE(Denies("Bash(git push:*)", "git status"));
  EXPECT_TRUE(Denies("Bash(npm run *)", "npm run build"));
  EXPECT_FALSE(Denies("Bash(npm run *)", "npm ci"));
  EXPECT_TRUE(Denies("Bash", "anything at all"));
}

// Inside a compound command, as Claude Code checks each part.
TEST(ClaudeRules, ASimpleCommandInsideACompoundOneMatches) {
  EXPECT_TRUE(Denies("Bash(git push:*)", "make test && git push origin main"));
  EXPECT_TRUE(Denies("Bash(rm:*)", "ls | rm -f x; echo done"));
  EXPECT_TRUE(Denies("Bash(git push:*)", "echo $(git push)"));
  EXPECT_FALSE(Denies("Bash(git push:*)", "make test && git status"));
}

// The ways around a rule that Claude Code's own matching may or may not see through: an
// assignment or a wrapper in front, a path for the name, a shell that parses the text again.
TEST(ClaudeRules, AssignmentsWrappersPathsAndNestedShellsStillMatch) {
  for (const char* command : {"FOO=1 git push", "env git push origin", "command git push",
                              "nice -n 5 git push", "timeout 60 git push", "/usr/bin/git push",
                              "sh -c 'git push'", "bash -c \"git push -f\"", "eval git push"}) {
    EXPECT_TRUE(Denies("Bash(git push:*)", command)) << command;
  }
  EXPECT_FALSE(Denies("Bash(git push:*)", "env git status"));
}

TEST(ClaudeRules, OnlyBashRulesOfDenyAndAskAreRead) {
  ClaudeRules rules;
  const json settings = {{"permissions",
                          {{"deny", {"Bash(git push:*)", "Read(./.env)", "WebFetch", 7}},
                           {"ask", {"Bash(npm publish:*)"}},
                           {"allow", {"Bash(ls)"}}}}};
  AddClaudeRules(settings, rules);
  EXPECT_EQ(rules.deny, std::vector<std::string>({"Bash(git push:*)"}));
  EXPECT_EQ(rules.ask, std::vector<std::string>({"Bash(npm publish:*)"}));
  AddClaudeRules(json::array(), rules);
  AddClaudeRules(json{{"permissions", "no"}}, rules);
  EXPECT_EQ(rules.deny.size(), 1u);
}

}  // namespace
}  // namespace cordon::cli
