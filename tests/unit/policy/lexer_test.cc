#include "policy/lexer.h"

#include <gtest/gtest.h>

#include "parse_helpers.h"
#include "policy/ansi_c_quote.h"
#include "policy/shell_parser.h"

namespace cordon::policy {
namespace {

using testing::Argvs;
using testing::Parse;

Word FirstWord(std::string_view text) {
  Result<Script> s = ParseScript(text);
  EXPECT_TRUE(s.has_value()) << text;
  if (!s || s->commands.empty() || s->commands.back().words.empty()) return {};
  return s->commands.back().words[0];
}

TEST(Lexer, RemovesSingleAndDoubleQuotes) {
  EXPECT_EQ(Parse(R"('su'"do" x)"), (Argvs{{"sudo", "x"}}));
  EXPECT_EQ(Parse(R"(echo "a 'b' c" 'd "e"')"), (Argvs{{"echo", "a 'b' c", "d \"e\""}}));
}

TEST(Lexer, BackslashEscapesAreRemovedOutsideQuotes) {
  EXPECT_EQ(Parse(R"(s\udo x)"), (Argvs{{"sudo", "x"}}));
  EXPECT_EQ(Parse("echo a\\ b"), (Argvs{{"echo", "a b"}}));
}

TEST(Lexer, BackslashInDoubleQuotesOnlyEscapesSpecialCharacters) {
  EXPECT_EQ(Parse(R"(echo "a\"b\$c\d")"), (Argvs{{"echo", "a\"b$c\\d"}}));
}

TEST(Lexer, LineContinuationJoinsWords) {
  EXPECT_EQ(Parse("su\\\ndo x \\\n  y"), (Argvs{{"sudo", "x", "y"}}));
}

TEST(Lexer, AnsiCQuotingIsDecoded) {
  EXPECT_EQ(Parse(R"($'\x73udo' $'a\tb' $'\163\165' $'\u00e9')"),
            (Argvs{{"sudo", "a\tb", "su", "\xc3\xa9"}}));
  EXPECT_EQ(DecodeAnsiC(R"(it\'s\n)"), "it's\n");
}

TEST(Lexer, ParameterExpansionsAreMarkedAndKeepTheirText) {
  Word w = FirstWord("$SHELL -c x");
  EXPECT_EQ(w.text, "$SHELL");
  EXPECT_TRUE(w.Has(kWordParam));
  EXPECT_TRUE(FirstWord("${X:-a}").Has(kWordParam));
  EXPECT_FALSE(FirstWord("'$X'").Has(kWordParam));
  EXPECT_EQ(FirstWord("'$X'").text, "$X");
}

TEST(Lexer, GlobBraceAndTildeAreMarkedOnlyWhenUnquoted) {
  EXPECT_TRUE(FirstWord("/usr/bin/su?o").Has(kWordGlob));
  EXPECT_FALSE(FirstWord("'su?o'").Has(kWordGlob));
  EXPECT_TRUE(FirstWord("{sudo,x}").Has(kWordBrace));
  EXPECT_FALSE(FirstWord("{x}").Has(kWordBrace));
  EXPECT_TRUE(FirstWord("~/x").Has(kWordTilde));
  EXPECT_FALSE(FirstWord("'~'/x").Has(kWordTilde));
}

TEST(Lexer, ArrayAssignmentsAreOneWordAndTheirSubstitutionsAreParsed) {
  EXPECT_EQ(Parse("a=(x 'y z' $(id)) && ls"), (Argvs{{"id"}, {"a=(x y z $(id))"}, {"ls"}}));
  EXPECT_EQ(Parse("a=(\n  x # comment\n  y\n)"), (Argvs{{"a=(x y)"}}));
  EXPECT_FALSE(ParseScript("a=(x y").has_value());
  EXPECT_FALSE(ParseScript("echo (x)").has_value());  // not an assignment: a syntax error
}

TEST(Lexer, CommentsAreSkippedButHashInsideAWordIsNot) {
  EXPECT_EQ(Parse("echo a#b # sudo x\nls"), (Argvs{{"echo", "a#b"}, {"ls"}}));
}

TEST(Lexer, UnterminatedQuotesAreErrorsNotCrashes) {
  for (std::string_view text :
       {"echo 'a", "echo \"a", "echo $'a", "echo `a", "echo ${a", "echo $(a", "echo $((1+2)"}) {
    Result<Script> s = ParseScript(text);
    EXPECT_FALSE(s.has_value()) << text;
  }
}

TEST(Lexer, HostileNestingIsAnErrorNotAStackOverflow) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "${";
  EXPECT_FALSE(ParseScript(deep).has_value());
  std::string subs;
  for (int i = 0; i < 100000; ++i) subs += "$(";
  EXPECT_FALSE(ParseScript(subs).has_value());
  std::string quotes = "echo ";
  for (int i = 0; i < 10000; ++i) quotes += "\"$(echo ";
  EXPECT_FALSE(ParseScript(quotes).has_value());
}

}  // namespace
}  // namespace cordon::policy
