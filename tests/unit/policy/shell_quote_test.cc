#include "policy/shell_quote.h"

#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace cordon::policy {
namespace {

TEST(ShellQuote, LeavesSafeWordsAloneAndSingleQuotesTheRest) {
  EXPECT_EQ(ShellQuote({"git", "commit", "-m", "it's done"}), "git commit -m 'it'\\''s done'");
  EXPECT_EQ(ShellQuote({"echo", ""}), "echo ''");
  EXPECT_EQ(ShellQuote({"if", "X=1"}), "'if' X=1");
}

TEST(ShellQuote, ParserRoundTripsTheQuotedArgv) {
  const std::vector<std::vector<std::string>> cases = {
      {"ls", "-la"},
      {"echo", "$HOME", "`id`", "$(sudo x)", "a b", "\"q\"", "'s'", "\\"},
      {"printf", "%s\\n", "tab\there", "new\nline", "*", "?", "[a]", "{a,b}", "~"},
      {"X=1", "a;b", "a&&b", "a|b", "(x)", "<in", ">out", "#c", "!"},
      {"if", "then", "fi", "{", "}", "", "-"},
  };
  for (const auto& argv : cases) {
    std::string text = ShellQuote(argv);
    Result<Script> s = ParseScript(text);
    ASSERT_TRUE(s.has_value()) << text;
    ASSERT_EQ(s->commands.size(), 1u) << text;
    EXPECT_EQ(testing::WordsOf(*s)[0], argv) << text;
    for (const Word& w : s->commands[0].words) EXPECT_FALSE(w.Dynamic()) << text;
  }
}

}  // namespace
}  // namespace cordon::policy
