// The man page and the completion scripts cover every visible subcommand, option and choice of
// the CLI11 tree that --help prints, and nothing hidden.
#include "cli/manual.h"

#include <gtest/gtest.h>

#include <functional>

#include "cli/command_line.h"

namespace cordon::cli {
namespace {

void ForEachApp(const CLI::App& app, const std::function<void(const CLI::App&)>& visit) {
  visit(app);
  for (const CLI::App* sub : VisibleSubcommands(app)) ForEachApp(*sub, visit);
}

class Manual : public ::testing::Test {
 protected:
  std::unique_ptr<CommandLine> cl_ = MakeCommandLine();
  std::string man_ = ManPage(cl_->app, "9.9.9");
  std::string bash_ = BashCompletion(cl_->app);
  std::string zsh_ = ZshCompletion(cl_->app);
};

TEST_F(Manual, EverySubcommandHasASectionAndIsCompleted) {
  int apps = 0;
  ForEachApp(cl_->app, [&](const CLI::App& app) {
    ++apps;
    const std::string path = CommandPath(app);
    if (app.get_parent() == nullptr) return;
    EXPECT_NE(man_.find(".SS \"" + RoffEscape(path) + "\""), std::string::npos) << path;
    EXPECT_NE(bash_.find("'" + path + "'"), std::string::npos) << path;
    EXPECT_NE(zsh_.find("'" + app.get_name() + ":"), std::string::npos) << path;
  });
  EXPECT_GE(apps, 12);  // cordon, 6 subcommands, sandbox's 5
}

TEST_F(Manual, EveryOptionOfEverySubcommandAppearsEverywhere) {
  int options = 0;
  ForEachApp(cl_->app, [&](const CLI::App& app) {
    const std::string path = CommandPath(app);
    for (const CLI::Option* option : VisibleOptions(app)) {
      OptionInfo o = DescribeOption(*option);
      ++options;
      if (!o.positional.empty()) continue;
      for (const std::string& name : o.names) {
        EXPECT_NE(man_.find("\\fB" + RoffEscape(name) + "\\fR"), std::string::npos)
            << path << " " << name;
        EXPECT_NE(bash_.find(name), std::string::npos) << path << " " << name;
        EXPECT_NE(zsh_.find(name), std::string::npos) << path << " " << name;
      }
      EXPECT_NE(man_.find(RoffEscape(o.description)), std::string::npos) << o.description;
      for (const std::string& choice : o.choices) {
        EXPECT_NE(man_.find(RoffEscape(choice)), std::string::npos) << choice;
      }
    }
  });
  EXPECT_GE(options, 30);
}

TEST_F(Manual, ChoicesComeFromTheTypeNamesThatHelpShows) {
  const CLI::App* run = cl_->app.get_subcommand("run");
  OptionInfo mode = DescribeOption(*run->get_option("--mode"));
  EXPECT_EQ(mode.kind, ValueKind::kChoices);
  EXPECT_EQ(mode.choices, (std::vector<std::string>{"off", "read_only", "workspace_write"}));
  EXPECT_NE(run->help().find("{off,read_only,workspace_write}"), std::string::npos);
  EXPECT_NE(bash_.find("'off read_only workspace_write'"), std::string::npos);
  EXPECT_NE(zsh_.find("(off read_only workspace_write)"), std::string::npos);
  // Twin: a free-form value has no choices.
  OptionInfo timeout = DescribeOption(*run->get_option("--timeout"));
  EXPECT_EQ(timeout.kind, ValueKind::kText);
  EXPECT_TRUE(timeout.choices.empty());
  EXPECT_FALSE(DescribeOption(*run->get_option("--json")).takes_value);
}

TEST_F(Manual, HiddenGenerateCommandStaysOutOfEverything) {
  // (The generated files' header comments name the command that made them.)
  EXPECT_EQ(man_.find(".SS \"cordon __generate"), std::string::npos);
  EXPECT_EQ(bash_.find("cordon/__generate"), std::string::npos);
  EXPECT_EQ(zsh_.find("'__generate:"), std::string::npos);
  EXPECT_EQ(zsh_.find("__generate)"), std::string::npos);
  EXPECT_EQ(cl_->app.help().find("__generate"), std::string::npos);
  // Twin: it exists and parses.
  EXPECT_NE(cl_->app.get_subcommand("__generate"), nullptr);
}

TEST_F(Manual, ManPageHasTheStandardSections) {
  for (const char* section :
       {".TH CORDON 1", ".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS",
        ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES", ".SH SEE ALSO"}) {
    EXPECT_NE(man_.find(section), std::string::npos) << section;
  }
  for (const ExitCodeDoc& row : kExitCodes) {
    EXPECT_NE(man_.find(".B " + RoffEscape(row.code)), std::string::npos) << row.code;
  }
  EXPECT_NE(man_.find("cordon 9.9.9"), std::string::npos);
}

TEST(RoffEscape, EscapesHyphensBackslashesAndLeadingDots) {
  EXPECT_EQ(RoffEscape("--mode"), "\\-\\-mode");
  EXPECT_EQ(RoffEscape("a\\b"), "a\\eb");
  EXPECT_EQ(RoffEscape(".git is kept"), "\\&.git is kept");
  EXPECT_EQ(RoffEscape("plain text"), "plain text");
}

}  // namespace
}  // namespace cordon::cli
