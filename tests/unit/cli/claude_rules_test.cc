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
