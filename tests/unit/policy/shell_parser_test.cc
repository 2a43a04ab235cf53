#include "policy/shell_parser.h"

#include <gtest/gtest.h>

#include "parse_helpers.h"

namespace cordon::policy {
namespace {

using testing::Argvs;
using testing::Parse;

TEST(ShellParser, SplitsSequencesAndAndOrLists) {
  EXPECT_EQ(Parse("a 1; b 2 && c || d\ne & f"),
            (Argvs{{"a", "1"}, {"b", "2"}, {"c"}, {"d"}, {"e"}, {"f"}}));
}

TEST(ShellParser, SplitsPipelinesIntoSimpleCommandsAndMarksPipedStages) {
  Result<Script> s = ParseScript("curl x | tee f |& sh");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->commands.size(), 3u);
  EXPECT_FALSE(s->commands[0].piped);
  EXPECT_TRUE(s->commands[1].piped);
  EXPECT_TRUE(s->commands[2].piped);
}

TEST(ShellParser, CommandsInsideAPipedCompoundReadThePipe) {
  Result<Script> s = ParseScript("curl x | { cat >/dev/null; sh; }; ls");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->commands.size(), 4u);
  EXPECT_TRUE(s->commands[2].piped);   // sh
  EXPECT_FALSE(s->commands[3].piped);  // ls
}

TEST(ShellParser, CommandsInAnOutputProcessSubstitutionReadAnotherCommandsOutput) {
  Result<Script> s = ParseScript("curl x | tee >(sh) <(cat f)");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->commands.size(), 4u);
  EXPECT_TRUE(s->commands[1].piped);   // sh inside >(...)
  EXPECT_FALSE(s->commands[2].piped);  // cat inside <(...)
}

TEST(ShellParser, ForLoopHeadersAreRecordedButAreNotCommands) {
  Result<Script> s = ParseScript("for f in a $(ls) b; do echo $f; done");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->commands.size(), 3u);
  EXPECT_TRUE(s->commands[1].loop_header);
  EXPECT_EQ(s->commands[1].words.size(), 4u);  // f a $(ls) b
  EXPECT_EQ(testing::WordsOf(*s), (Argvs{{"ls"}, {"echo", "$f"}}));
}

TEST(ShellParser, FindsCommandsInSubshellsGroupsAndSubstitutions) {
  EXPECT_EQ(Parse("(a; b) && { c; }"), (Argvs{{"a"}, {"b"}, {"c"}}));
  Argvs subs = Parse("echo $(sudo x) \"`id -u`\" <(curl y)");
  EXPECT_EQ(subs.size(), 4u);
  EXPECT_EQ(subs[0], (std::vector<std::string>{"sudo", "x"}));
  EXPECT_EQ(subs[1], (std::vector<std::string>{"id", "-u"}));
  EXPECT_EQ(subs[2], (std::vector<std::string>{"curl", "y"}));
  EXPECT_EQ(subs[3][0], "echo");
}

TEST(ShellParser, ArithmeticIsNotACommandButSubstitutionsInsideItAre) {
  EXPECT_EQ(Parse("echo $((1 + (2*3)))"), (Argvs{{"echo", "$((1 + (2*3)))"}}));
  EXPECT_EQ(Parse("((i++)); echo $(( $(wc -l < f) + 1 ))"),
            (Argvs{{"wc", "-l"}, {"echo", "$(( $(wc -l < f) + 1 ))"}}));
}

TEST(ShellParser, ReservedWordsAreNotCommandWords) {
  EXPECT_EQ(Parse("if test -f x; then make; elif true; then :; else echo no; fi"),
            (Argvs{{"test", "-f", "x"}, {"make"}, {"true"}, {":"}, {"echo", "no"}}));
  EXPECT_EQ(Parse("for f in a b; do gcc -c $f; done"), (Argvs{{"gcc", "-c", "$f"}}));
  EXPECT_EQ(Parse("while read l; do echo $l; done < f"),
            (Argvs{{"read", "l"}, {"echo", "$l"}, {}}));
  EXPECT_EQ(Parse("for ((i=0;i<3;i++)); do echo $i; done"), (Argvs{{"echo", "$i"}}));
  EXPECT_EQ(Parse("echo if then fi"), (Argvs{{"echo", "if", "then", "fi"}}));
}

TEST(ShellParser, CaseArmsAreCommandsAndPatternsAreNot) {
  EXPECT_EQ(Parse("case $x in a|b) make;; (c) sudo x;; *) ls\nesac"),
            (Argvs{{"make"}, {"sudo", "x"}, {"ls"}}));
}

TEST(ShellParser, FunctionBodiesAreParsedAndTheNameIsNotACommand) {
  EXPECT_EQ(Parse("f() { sudo x; }; f"), (Argvs{{"sudo", "x"}, {"f"}}));
  EXPECT_EQ(Parse("function g { ls; }"), (Argvs{{"ls"}}));
  EXPECT_EQ(Parse("[[ -f x && $(id -u) -eq 0 ]] && ls"), (Argvs{{"id", "-u"}, {"ls"}}));
}

TEST(ShellParser, RedirectionsAreRecordedAndNotWords) {
  Result<Script> s = ParseScript("cmd 2>&1 >out.txt <in 3<>rw &>both >& f2");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->commands.size(), 1u);
  const SimpleCommand& c = s->commands[0];
  EXPECT_EQ(c.words.size(), 1u);
  ASSERT_EQ(c.redirects.size(), 6u);
  EXPECT_EQ(c.redirects[0].fd, 2);
  EXPECT_FALSE(c.redirects[0].Writes());  // 2>&1 duplicates a descriptor
  EXPECT_TRUE(c.redirects[1].Writes());
  EXPECT_EQ(c.redirects[1].target.text, "out.txt");
  EXPECT_EQ(c.redirects[3].fd, 3);
  EXPECT_TRUE(c.redirects[5].Writes());  // >& file
}

TEST(ShellParser, HereDocBodiesAreReadAndNotParsedAsCommands) {
  Result<Script> s = ParseScript("cat <<EOF > f\nsudo x\nEOF\nls\ncat <<-'E'\n\tsudo y\n\tE\n");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(testing::WordsOf(*s), (Argvs{{"cat"}, {"ls"}, {"cat"}}));
  EXPECT_EQ(s->commands[0].redirects[0].body, "sudo x\n");
  EXPECT_EQ(s->commands[2].redirects[0].body, "sudo y\n");
}

TEST(ShellParser, SubstitutionsInUnquotedHereDocsRunAndAreFound) {
  EXPECT_EQ(Parse("cat <<EOF\n$(sudo x)\nEOF"), (Argvs{{"cat"}, {"sudo", "x"}}));
  EXPECT_EQ(Parse("cat <<'EOF'\n$(sudo x)\nEOF"), (Argvs{{"cat"}}));
  EXPECT_EQ(Parse("cat <<<\"$(id)\""), (Argvs{{"id"}, {"cat"}}));
}

TEST(ShellParser, AHereDocInsideACommandSubstitutionEndsBeforeItsParenthesis) {
  // The form agents use for commit messages.
  EXPECT_EQ(Parse("git commit -m \"$(cat <<'EOF'\nmsg (with parens)\nEOF\n)\" && sudo x"),
            (Argvs{{"cat"},
                   {"git", "commit", "-m", "$(cat <<'EOF'\nmsg (with parens)\nEOF\n)"},
                   {"sudo", "x"}}));
}

TEST(ShellParser, UnbalancedConstructsAreErrors) {
  for (std::string_view text : {"(a", "a)", "{ a;", "if a; then b", "fi", "done", "for x in y",
                                "case x in a) b;;", "a |", "echo $(a", "f(", "a && (b"}) {
    EXPECT_FALSE(ParseScript(text).has_value()) << text;
  }
}

TEST(ShellParser, EmptyTextAndCommentsHaveNoCommands) {
  EXPECT_EQ(Parse(""), Argvs{});
  EXPECT_EQ(Parse("  # just a comment\n\n"), Argvs{});
}

}  // namespace
}  // namespace cordon::policy
