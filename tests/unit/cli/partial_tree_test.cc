// Main builds only the subcommand argv names (RequestedSubcommand): the parse must come out the
// same as with the whole tree, for good and bad command lines alike.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/command_line.h"

namespace cordon::cli {
namespace {

std::string_view Requested(std::vector<std::string> args) {
  static std::vector<std::string> keep;  // RequestedSubcommand may return a view into argv
  keep = std::move(args);
  std::vector<char*> argv;
  for (std::string& a : keep) argv.push_back(a.data());
  return RequestedSubcommand(static_cast<int>(argv.size()), argv.data());
}

// Which subcommand parsed, or the error CLI11 raised, as text.
std::string Parse(const std::vector<std::string>& args, std::string_view only) {
  std::unique_ptr<CommandLine> cl = MakeCommandLine(only);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(a.data());
  try {
    cl->app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Error& e) {
    return "error " + e.get_name() + ": " + e.what();
  }
  for (const Subcommand& s : cl->subcommands) {
    if (s.app->parsed()) return "parsed " + s.app->get_name();
  }
  return "nothing parsed";
}

TEST(PartialTree, TheSubcommandIsFoundPastTheRootsOptions) {
  EXPECT_EQ(Requested({"cordon", "run", "--", "true"}), "run");
  EXPECT_EQ(Requested({"cordon", "--config", "c.json", "status", "--json"}), "status");
  EXPECT_EQ(Requested({"cordon", "--config=c.json", "check", "--", "ls"}), "check");
  EXPECT_EQ(Requested({"cordon", "sandbox", "network", "deny"}), "sandbox");
}

TEST(PartialTree, HelpVersionUnknownAndGenerateBuildTheWholeTree) {
  EXPECT_EQ(Requested({"cordon"}), "");
  EXPECT_EQ(Requested({"cordon", "--help"}), "");
  EXPECT_EQ(Requested({"cordon", "--version"}), "");
  EXPECT_EQ(Requested({"cordon", "rnu", "--", "true"}), "");
  EXPECT_EQ(Requested({"cordon", "--config"}), "");
  EXPECT_EQ(Requested({"cordon", "__generate", "man"}), "");  // walks every subcommand
}

TEST(PartialTree, ParsesAsTheWholeTreeDoes) {
  const std::vector<std::vector<std::string>> lines = {
      {"cordon", "run", "--", "true"},
      {"cordon", "run", "--mode", "read_only", "--json", "--", "ls", "-l"},
      {"cordon", "run", "-c", "echo hi"},
      {"cordon", "run", "--bogus", "--", "true"},
      {"cordon", "run", "--mode", "bogus", "--", "true"},
      {"cordon", "run", "status"},
      {"cordon", "run", "--", "status", "--json"},
      {"cordon", "run", "--timeout"},
      {"cordon", "--config", "/nonexistent", "run", "--", "true"},
      {"cordon", "status", "run"},
      {"cordon", "status", "--json", "--bogus"},
      {"cordon", "check", "--", "rm", "-rf", "/"},
      {"cordon", "sandbox", "network", "allow"},
      {"cordon", "sandbox", "bogus"},
      {"cordon", "mcp", "--bogus"},
      {"cordon", "doctor"},
  };
  for (const std::vector<std::string>& line : lines) {
    const std::string only(Requested(line));
    ASSERT_FALSE(only.empty()) << line[1];
    EXPECT_EQ(Parse(line, only), Parse(line, {})) << line[1] << " " << line.back();
  }
}

}  // namespace
}  // namespace cordon::cli
