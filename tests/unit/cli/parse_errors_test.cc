#include "cli/parse_errors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::cli {
namespace {

// Parses `args` with a small app shaped like cordon's (a subcommand with a valued option and a
// required positional) and returns the message for the error CLI11 raised ("" if none).
std::string MessageFor(std::vector<std::string> args, std::string_view subcommand = "run") {
  CLI::App app{"test"};
  app.require_subcommand(1);
  CLI::App* run = app.add_subcommand("run");
  double timeout = 0;
  std::string text;
  run->add_option("--timeout", timeout, "")->type_name("SECONDS");
  run->add_option("text", text, "")->required();
  std::vector<const char*> argv{"cordon"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    return DescribeParseError(e, subcommand);
  }
  return "";
}

TEST(ParseErrors, AnUnknownOptionIsNamed) {
  EXPECT_EQ(MessageFor({"run", "--bogus", "x"}),
            "run: unknown option --bogus\nSee `cordon run --help` for usage.");
  // A value after it becomes an argument of its own: the option is still the one named.
  EXPECT_EQ(MessageFor({"run", "x", "--cpus", "2"}),
            "run: unknown option --cpus\nSee `cordon run --help` for usage.");
}

TEST(ParseErrors, AnExtraArgumentIsQuoted) {
  EXPECT_EQ(MessageFor({"run", "x", "y"}),
            "run: unexpected argument \"y\"\nSee `cordon run --help` for usage.");
}

TEST(ParseErrors, AMissingValueSaysWhichOptionNeedsOne) {
  EXPECT_EQ(MessageFor({"run", "x", "--timeout"}),
            "run: --timeout needs a value (SECONDS)\nSee `cordon run --help` for usage.");
}

TEST(ParseErrors, AMissingSubcommandListsThem) {
  const std::string message = MessageFor({}, "");
  EXPECT_EQ(message.rfind("a subcommand is required (run, check", 0), 0u) << message;
  EXPECT_NE(message.find("See `cordon --help` for usage."), std::string::npos) << message;
}

// `cordon hook` alone: its own subcommands are listed by its --help, not cordon's.
TEST(ParseErrors, AMissingNestedSubcommandPointsAtItsHelp) {
  std::string message;
  try {
    CLI::App app{"test"};
    CLI::App* hook = app.add_subcommand("hook");
    hook->require_subcommand(1);
    hook->add_subcommand("claude-code");
    std::vector<const char*> argv{"cordon", "hook"};
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    message = DescribeParseError(e, "hook");
  }
  EXPECT_EQ(message, "hook: a subcommand is required\nSee `cordon hook --help` for usage.");
}

TEST(ParseErrors, AWordThatNamesNoSubcommandIsCalledUnknown) {
  std::string message;
  try {
    CLI::App app{"test"};
    app.require_subcommand(1);
    app.add_subcommand("run");
    std::vector<const char*> argv{"cordon", "bogus"};
    app.parse(static_cast<int>(argv.size()), const_cast<char**>(argv.data()));
  } catch (const CLI::ParseError& e) {
    message = DescribeParseError(e, "", "bogus");
  }
  EXPECT_EQ(message.rfind("unknown subcommand \"bogus\" (run, check", 0), 0u) << message;
}

TEST(ParseErrors, ARequiredArgumentIsNamed) {
  EXPECT_EQ(MessageFor({"run"}), "run: text is required\nSee `cordon run --help` for usage.");
}

// Twin: no error, no message.
TEST(ParseErrors, AGoodCommandLineRaisesNone) {
  EXPECT_EQ(MessageFor({"run", "--timeout", "2", "x"}), "");
}

}  // namespace
}  // namespace cordon::cli
