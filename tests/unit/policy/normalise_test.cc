#include "policy/normalise.h"

#include <gtest/gtest.h>

#include "parse_helpers.h"
#include "policy/wrappers.h"

namespace cordon::policy {
namespace {

using testing::Argvs;
using testing::Normalised;

TEST(Normalise, StripsLeadingAssignmentsAndReducesTheCommandWordToItsBasename) {
  EXPECT_EQ(Normalised("FOO=1 BAR+=x A[1]=2 /usr/bin/sudo ls"), (Argvs{{"sudo", "ls"}}));
  EXPECT_EQ(Normalised("./build.sh --fast"), (Argvs{{"build.sh", "--fast"}}));
}

TEST(Normalise, StripsWrappersWithTheirOptions) {
  EXPECT_EQ(Normalised("env -i -u HOME X=1 nice -n 5 nohup timeout -s KILL 10s sudo x"),
            (Argvs{{"sudo", "x"}}));
  EXPECT_EQ(Normalised("stdbuf -oL xargs -0 -n1 -I{} ionice -c3 rm {}"), (Argvs{{"rm", "{}"}}));
  EXPECT_EQ(Normalised("command -p exec -a name time -p setsid taskset 0x3 chrt 10 ls"),
            (Argvs{{"ls"}}));
  EXPECT_EQ(Normalised("busybox rm -rf /"), (Argvs{{"rm", "-rf", "/"}}));
  EXPECT_EQ(Normalised("uv run --with requests pytest -q"), (Argvs{{"pytest", "-q"}}));
}

TEST(Normalise, AWrapperWithoutACommandIsItselfTheCommand) {
  EXPECT_EQ(Normalised("env"), (Argvs{{"env"}}));
  // An option whose value is missing ends the words (found by fuzzing: xargs's -I read one
  // word past the end). xargs then runs its default, echo: the wrapper is the command.
  EXPECT_EQ(Normalised("seq 1 10 | xargs -P2 -I"),
            (Argvs{{"seq", "1", "10"}, {"xargs", "-P2", "-I"}}));
  EXPECT_EQ(Normalised("timeout -s"), (Argvs{{"timeout", "-s"}}));
  EXPECT_EQ(Normalised("uv pip install x"), (Argvs{{"uv", "pip", "install", "x"}}));
}

TEST(Normalise, CommandDashVOnlyLooksANameUp) {
  Result<Script> s = ParseScript("command -v sudo");
  ASSERT_TRUE(s.has_value());
  Analysis a = Analyse(*s, 0);
  ASSERT_EQ(a.commands.size(), 1u);
  EXPECT_TRUE(a.commands[0].query_only);
  EXPECT_EQ(a.commands[0].text, "command -v sudo");
}

TEST(Normalise, ReparsesShellStringsEvalTrapAndFindExec) {
  EXPECT_EQ(Normalised("bash -lc 'cd x && sudo y'"),
            (Argvs{{"bash", "-lc", "cd x && sudo y"}, {"cd", "x"}, {"sudo", "y"}}));
  EXPECT_EQ(Normalised("eval \"sudo x\""), (Argvs{{"eval", "sudo x"}, {"sudo", "x"}}));
  EXPECT_EQ(Normalised("trap 'sudo x' EXIT"), (Argvs{{"trap", "sudo x", "EXIT"}, {"sudo", "x"}}));
  EXPECT_EQ(
      Normalised("find . -name '*.o' -exec rm -f {} \\;"),
      (Argvs{{"find", ".", "-name", "*.o", "-exec", "rm", "-f", "{}", ";"}, {"rm", "-f", "{}"}}));
  EXPECT_EQ(Normalised("xargs sh -c 'sudo x'"), (Argvs{{"sh", "-c", "sudo x"}, {"sudo", "x"}}));
  EXPECT_EQ(Normalised("watch -n 1 'sudo x'"),
            (Argvs{{"watch", "-n", "1", "sudo x"}, {"sudo", "x"}}));
}

TEST(Normalise, AHereDocFedToAShellIsParsed) {
  EXPECT_EQ(Normalised("bash <<'EOF'\nsudo x\nEOF"), (Argvs{{"bash"}, {"sudo", "x"}}));
  EXPECT_EQ(Normalised("cat <<'EOF'\nsudo x\nEOF"), (Argvs{{"cat"}}));
}

TEST(Normalise, BraceExpansionOfTheCommandWordIsApplied) {
  EXPECT_EQ(Normalised("{sudo,ls}"), (Argvs{{"sudo", "ls"}}));
  EXPECT_EQ(ExpandBraces("a{b,c}d"), (std::vector<std::string>{"abd", "acd"}));
  EXPECT_EQ(ExpandBraces("{1..3}"), (std::vector<std::string>{"{1..3}"}));
}

TEST(Normalise, VariablesAssignedInTheSameTextAreResolvedAsCommandWords) {
  EXPECT_EQ(Normalised("x=sudo; $x ls"), (Argvs{{}, {"sudo", "ls"}}));
  EXPECT_EQ(Normalised("X='env sudo'; ${X} ls"), (Argvs{{}, {"sudo", "ls"}}));
  EXPECT_EQ(Normalised("for c in ls sudo; do $c x; done"), (Argvs{{"ls", "x"}, {"sudo", "x"}}));
  EXPECT_EQ(Normalised("$EDITOR notes.md"), (Argvs{{"$EDITOR", "notes.md"}}));
}

// Values the text itself determines (issue 35): a parameter's default or alternative where
// nothing rules it out, positional parameters set by `set --`, printf -v and read <<<.
TEST(Normalise, ValuesTheTextDeterminesAreResolvedInTheCommandWord) {
  EXPECT_EQ(Normalised("${X:-sudo} id"), (Argvs{{"sudo", "id"}, {"${X:-sudo}", "id"}}));
  EXPECT_EQ(Normalised("X=ls; ${X:-sudo} id"), (Argvs{{}, {"ls", "id"}, {"${X:-sudo}", "id"}}));
  EXPECT_EQ(Normalised("X=ls; ${X:+sudo} id"), (Argvs{{}, {"sudo", "id"}, {"${X:+sudo}", "id"}}));
  EXPECT_EQ(Normalised("X=; ${X-ls} id"), (Argvs{{}, {"${X-ls}", "id"}}));  // set, empty
  EXPECT_EQ(Normalised("set -- sudo id; \"$@\""),
            (Argvs{{"set", "--", "sudo", "id"}, {"sudo", "id"}, {"$@"}}));
  EXPECT_EQ(Normalised("printf -v x sudo; $x"), (Argvs{{"printf", "-v", "x", "sudo"}, {"sudo"}}));
  EXPECT_EQ(Normalised("read x <<< sudo; $x"), (Argvs{{"read", "x"}, {"sudo"}}));
}

TEST(Normalise, IfsInAWordIsTreatedAsWordSplitting) {
  EXPECT_EQ(Normalised("mkfs$IFS/dev/sda"), (Argvs{{"mkfs", "/dev/sda"}}));
  EXPECT_EQ(Normalised("cat${IFS}f"), (Argvs{{"cat", "f"}}));
}

TEST(Normalise, ACommandWordWithUnknownExpansionsIsAlsoJudgedWithThemEmpty) {
  EXPECT_EQ(Normalised("su${z}do ls"), (Argvs{{"sudo", "ls"}, {"su${z}do", "ls"}}));
  EXPECT_EQ(Normalised("a=x; b${a}c"), (Argvs{{}, {"bxc"}, {"b${a}c"}}));
  EXPECT_EQ(Normalised("$EDITOR f"), (Argvs{{"$EDITOR", "f"}}));
}

TEST(Normalise, HugeVariableValuesAreNotSubstitutedButTreatedAsUnknownOutput) {
  std::string text = "x=" + std::string(10000, 'a') + "; $x y";
  Result<Script> s = ParseScript(text);
  ASSERT_TRUE(s.has_value());
  Analysis a = Analyse(*s, 0);
  ASSERT_EQ(a.commands.size(), 2u);
  EXPECT_TRUE(a.commands[1].name_from_output);
  EXPECT_LT(a.commands[1].text.size(), 100u);
}

TEST(Normalise, SelfReferencingVariablesDoNotMultiplyWithoutBound) {
  Result<Script> s = ParseScript("for c in '$c' '$c' '$c' '$c'; do $c; done");
  ASSERT_TRUE(s.has_value());
  Analysis a = Analyse(*s, 0);
  EXPECT_LT(a.commands.size(), 1000u);
}

TEST(Normalise, CommandWordsFromCommandOutputAreMarkedUnlessTheyAreALookup) {
  auto first = [](std::string_view text) {
    Result<Script> s = ParseScript(text);
    EXPECT_TRUE(s.has_value());
    return Analyse(*s, 0).commands.back();
  };
  EXPECT_TRUE(first("$(echo sudo) ls").name_from_output);
  EXPECT_TRUE(first("x=$(curl y); $x").name_from_output);
  Command which = first("$(which python3) -m pip list");
  EXPECT_FALSE(which.name_from_output);
  EXPECT_EQ(which.text, "python3 -m pip list");
  EXPECT_FALSE(first("CC=$(command -v gcc); $CC -c x.c").name_from_output);
  EXPECT_FALSE(first("\"$(go env GOPATH)/bin/golangci-lint\" run").name_from_output);
}

TEST(Normalise, AnOversizedBraceExpansionMakesTheTextTooComplexInsteadOfGrowing) {
  std::string text = "{x" + std::string(20000, ',') + "}" + std::string(1000, 'y');
  Result<Script> s = ParseScript(text);
  ASSERT_TRUE(s.has_value());
  Analysis a = Analyse(*s, 0);
  EXPECT_TRUE(a.too_complex);
  EXPECT_TRUE(ExpandBraces(text).empty());
  EXPECT_EQ(ExpandBraces("{rm,-rf,/}").size(), 3u);
}

TEST(Normalise, UnparsableNestedTextIsReportedNotDropped) {
  Result<Script> s = ParseScript("bash -c 'echo \"unterminated'");
  ASSERT_TRUE(s.has_value());
  Analysis a = Analyse(*s, 0);
  ASSERT_EQ(a.unparsed.size(), 1u);
  EXPECT_EQ(a.unparsed[0], "echo \"unterminated");
}

TEST(Normalise, StdinSourceFollowsPipesAndRedirections) {
  auto stdin_of = [](std::string_view text) {
    Result<Script> s = ParseScript(text);
    EXPECT_TRUE(s.has_value());
    for (const Command& c : Analyse(*s, 0).commands) {
      if (c.name() == "sh") return c.stdin_source;
    }
    return StdinSource::kInherited;
  };
  EXPECT_EQ(stdin_of("curl x | sh"), StdinSource::kPipe);
  EXPECT_EQ(stdin_of("curl x | sh < f"), StdinSource::kFile);
  EXPECT_EQ(stdin_of("sh < <(curl x)"), StdinSource::kSubstitution);
  EXPECT_EQ(stdin_of("sh <<< 'ls'"), StdinSource::kHereDoc);
  EXPECT_EQ(stdin_of("sh"), StdinSource::kInherited);
}

}  // namespace
}  // namespace cordon::policy
