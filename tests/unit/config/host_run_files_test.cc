#include "config/host_run_files.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "config/load.h"
#include "config/to_json.h"
#include "config_matchers.h"

namespace cordon::config {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> BuiltIn() {
  const auto built_in = BuiltInHostRunFiles();
  return {built_in.begin(), built_in.end()};
}

bool Has(const std::vector<std::string>& list, std::string_view entry) {
  return std::find(list.begin(), list.end(), entry) != list.end();
}

TEST(HostRunFiles, EveryBuiltInEntryIsAValidEntryAndListedOnce) {
  const std::vector<std::string> built_in = BuiltIn();
  for (const std::string& entry : built_in) {
    EXPECT_EQ(HostRunEntryProblem(entry), "") << entry;
    EXPECT_EQ(std::count_if(built_in.begin(), built_in.end(),
                            [&](const std::string& e) { return SameHostRunEntry(e, entry); }),
              1)
        << entry;
  }
  // The agents' and editors' own: the ones the issue names.
  for (const char* entry : {".claude/", ".mcp.json", ".codex/", ".gemini/", ".vscode/", ".idea/",
                            ".envrc", ".devcontainer/", ".gitmodules"}) {
    EXPECT_TRUE(Has(built_in, entry)) << entry;
  }
  // Instruction files the agents edit as ordinary work stay writable (docs/threat-model.md).
  for (const char* entry : {"AGENTS.md", "CLAUDE.md", "GEMINI.md", ".gitattributes", ".env"}) {
    EXPECT_FALSE(Has(built_in, entry)) << entry;
  }
}

TEST(HostRunFiles, AnEntryIsARelativePathOfPlainNames) {
  EXPECT_EQ(HostRunEntryProblem("scripts/hooks/"), "");
  EXPECT_EQ(HostRunEntryProblem(".tool-versions"), "");
  EXPECT_THAT(HostRunEntryProblem(""), HasSubstr("empty"));
  EXPECT_THAT(HostRunEntryProblem("/etc/passwd"), HasSubstr("absolute"));
  EXPECT_THAT(HostRunEntryProblem("../outside"), HasSubstr("\"..\""));
  EXPECT_THAT(HostRunEntryProblem("a/./b"), HasSubstr("\".\""));
  EXPECT_THAT(HostRunEntryProblem("a//b"), HasSubstr("empty path component"));
  EXPECT_THAT(HostRunEntryProblem(std::string("a\0b", 3)), HasSubstr("NUL"));
  EXPECT_THAT(HostRunEntryProblem(std::string(256, 'x')), HasSubstr("255"));
  EXPECT_THAT(HostRunEntryProblem(std::string(1025, 'x')), HasSubstr("1024"));
}

TEST(HostRunFiles, TheListIsTheBuiltInOneMinusRemovedPlusAdded) {
  SandboxConfig config;
  EXPECT_EQ(HostRunFiles(config), BuiltIn());
  config.host_run_files.remove = {".idea", ".vscode/"};                         // either spelling
  config.host_run_files.add = {"scripts/hooks/", ".claude/", "scripts/hooks"};  // no repeats
  const std::vector<std::string> list = HostRunFiles(config);
  EXPECT_FALSE(Has(list, ".idea/"));
  EXPECT_FALSE(Has(list, ".vscode/"));
  EXPECT_TRUE(Has(list, ".claude/"));
  EXPECT_EQ(list.back(), "scripts/hooks/");
  EXPECT_EQ(list.size(), BuiltIn().size() - 2 + 1);
  // The twin: off, or a mode without writable roots, protects nothing.
  config.protect_host_run_files = false;
  EXPECT_TRUE(HostRunFiles(config).empty());
  config.protect_host_run_files = true;
  config.mode = SandboxMode::kReadOnly;
  EXPECT_TRUE(HostRunFiles(config).empty());
}

std::string ErrorFor(std::string_view text) {
  Result<Config> config = ParseConfigText(text, "config.json", Env{.home = "/home/u"});
  if (config) return "";
  EXPECT_EQ(config.error().code, ErrorCode::kConfig);
  return config.error().message;
}

TEST(HostRunFiles, TheConfigReadsWritesAndChecksBothLists) {
  Result<Config> read = ParseConfigText(
      R"({"sandbox": {"protect_host_run_files": false,
                      "host_run_files": {"add": ["tools/hooks/"], "remove": [".idea/"]}}})",
      "config.json", Env{.home = "/home/u"});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->sandbox.protect_host_run_files);
  EXPECT_EQ(read->sandbox.host_run_files.add, std::vector<std::string>{"tools/hooks/"});
  EXPECT_EQ(read->sandbox.host_run_files.remove, std::vector<std::string>{".idea/"});
  Result<Config> again = ParseConfigText(ToJson(*read), "again.json", Env{.home = "/home/u"});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(testing::ConfigsEqual(*read, *again));

  EXPECT_EQ(ErrorFor(R"({"sandbox": {"host_run_files": {"add": ["../x"]}}})"),
            "config.json: /sandbox/host_run_files/add/0: \"../x\" is not a path relative to a "
            "writable root: contains a \".\" or \"..\" component");
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"host_run_files": {"remove": [".claude/", ".idee/"]}}})"),
              HasSubstr("/sandbox/host_run_files/remove/1: \".idee/\" is not one of the built-in"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"host_run_files": {"drop": []}}})"),
              HasSubstr("unknown key \"drop\""));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"host_run_files": {"add": "x"}}})"),
              HasSubstr("/sandbox/host_run_files/add: expected"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"protect_host_run_files": "yes"}})"),
              HasSubstr("/sandbox/protect_host_run_files: expected true or false"));
}

TEST(HostRunFiles, TheNestedProjectDepthIsALevelCountFromZeroToEight) {
  EXPECT_EQ(SandboxConfig{}.nested_project_depth, 2u);
  Result<Config> read = ParseConfigText(R"({"sandbox": {"nested_project_depth": 0}})",
                                        "config.json", Env{.home = "/home/u"});
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->sandbox.nested_project_depth, 0u);
  Result<Config> again = ParseConfigText(ToJson(*read), "again.json", Env{.home = "/home/u"});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->sandbox.nested_project_depth, 0u);
  for (const char* bad : {"9", "-1", "1.5", "\"2\"", "true"}) {
    EXPECT_EQ(ErrorFor(fmt::format(R"({{"sandbox": {{"nested_project_depth": {}}}}})", bad)),
              fmt::format("config.json: /sandbox/nested_project_depth: expected an integer "
                          "number of levels from 0 to 8, found {}",
                          bad))
        << bad;
  }
}

}  // namespace
}  // namespace cordon::config
