// The man page and the completion scripts that the build generated: they are what the binary
// itself prints, bash really completes with them, zsh parses them, and man renders the page.
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

namespace fs = std::filesystem;

class Manual : public CliTest {
 protected:
  static bool Have(const std::string& program) {
    return ::access(("/usr/bin/" + program).c_str(), X_OK) == 0 ||
           ::access(("/bin/" + program).c_str(), X_OK) == 0;
  }

  // The words bash's completion offers for `words` with the cursor on the last one.
  std::vector<std::string> Complete(const std::vector<std::string>& words) {
    std::string array;
    for (const std::string& w : words) array += " '" + w + "'";
    Invocation inv;
    inv.argv = {"/bin/bash", "--norc", "--noprofile", "-c",
                "source '" + (fs::path(CORDON_GENERATED_DIR) / "cordon.bash").string() +
                    "'; COMP_WORDS=(" + array +
                    "); COMP_CWORD=" + std::to_string(words.size() - 1) +
                    "; _cordon; printf '%s\\n' \"${COMPREPLY[@]}\""};
    inv.env = {"PATH=/usr/bin:/bin"};
    inv.cwd = workspace_;
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    std::vector<std::string> out;
    std::istringstream lines(o.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  using Words = std::vector<std::string>;
};

TEST_F(Manual, TheBuildInstalledWhatTheBinaryPrints) {
  for (const auto& [what, file] : {std::pair<std::string, std::string>{"man", "cordon.1"},
                                   {"bash", "cordon.bash"},
                                   {"zsh", "_cordon"}}) {
    Outcome o = Cordon({"__generate", what});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out, ReadFile(fs::path(CORDON_GENERATED_DIR) / file)) << what;
  }
  EXPECT_TRUE(fs::exists(fs::path(CORDON_GENERATED_DIR) / "cordon.1.gz"));
  EXPECT_EQ(Cordon({"__generate", "fish"}).exit_code, 125);
}

TEST_F(Manual, BashCompletesSubcommands) {
  EXPECT_EQ(Complete({"cordon", "ru"}), Words{"run"});
  EXPECT_EQ(Complete({"cordon", "d"}), Words{"doctor"});
  EXPECT_EQ(Complete({"cordon", "s"}), (Words{"sandbox", "serve", "status"}));
  EXPECT_EQ(Complete({"cordon", "_"}), Words{});  // the hidden __generate is not offered
  EXPECT_EQ(Complete({"cordon", "sandbox", "n"}), Words{"network"});
}

TEST_F(Manual, BashCompletesOptionsOfTheSubcommandTyped) {
  EXPECT_EQ(Complete({"cordon", "run", "--mo"}), Words{"--mode"});
  EXPECT_EQ(Complete({"cordon", "status", "--j"}), Words{"--json"});
  EXPECT_EQ(Complete({"cordon", "sandbox", "--j"}), Words{});  // sandbox has no --json
  // Option values are skipped while walking: --config's value is not taken for a subcommand.
  EXPECT_EQ(Complete({"cordon", "--config", "run", "run", "--netw"}), Words{"--network"});
}

TEST_F(Manual, BashCompletesChoicesDirectoriesAndCommands) {
  EXPECT_EQ(Complete({"cordon", "run", "--mode", "r"}), Words{"read_only"});
  EXPECT_EQ(Complete({"cordon", "run", "--mode", "x"}), Words{});
  EXPECT_EQ(Complete({"cordon", "sandbox", "network", ""}),
            (Words{"allow", "allow-domain", "deny", "deny-domain", "domains", "parent-proxy"}));
  EXPECT_EQ(Complete({"cordon", "sandbox", "home", ""}), (Words{"auto", "hidden", "read_only"}));
  fs::create_directories(workspace_ / "subdir");
  WriteFile(workspace_ / "subfile", "");
  EXPECT_EQ(Complete({"cordon", "mcp", "--workspace", "sub"}), Words{"subdir"});
  // After --: the first word is a command (found on PATH, maybe twice with a merged /usr),
  // later ones are files.
  Words commands = Complete({"cordon", "run", "--", "bas"});
  EXPECT_NE(std::find(commands.begin(), commands.end(), "bash"), commands.end());
  EXPECT_EQ(std::find(commands.begin(), commands.end(), "subdir"), commands.end());
  EXPECT_EQ(Complete({"cordon", "run", "--", "bash", "sub"}), (Words{"subdir", "subfile"}));
}

TEST_F(Manual, ZshParsesTheCompletionScript) {
  if (!Have("zsh")) GTEST_SKIP() << "zsh is not installed";
  Invocation inv;
  inv.argv = {"/usr/bin/zsh", "-n", (fs::path(CORDON_GENERATED_DIR) / "_cordon").string()};
  inv.env = {"PATH=/usr/bin:/bin"};
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  // Twin: zsh -n does reject a broken script.
  WriteFile(workspace_ / "_broken", "_x() {\n  case $1 in\n}\n");
  inv.argv = {"/usr/bin/zsh", "-n", (workspace_ / "_broken").string()};
  EXPECT_NE(RunBinary(inv).exit_code, 0);
}

TEST_F(Manual, ManRendersThePage) {
  if (!Have("man")) GTEST_SKIP() << "man-db is not installed";
  Invocation inv;
  inv.argv = {"/usr/bin/man", "-l", (fs::path(CORDON_GENERATED_DIR) / "cordon.1.gz").string()};
  inv.env = {"PATH=/usr/bin:/bin", "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100", "LANG=C.UTF-8"};
  inv.cwd = workspace_;
  Outcome o = RunBinary(inv);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* text : {"EXIT STATUS", "cordon doctor", "--writable-root", "ENVIRONMENT"}) {
    EXPECT_NE(o.out.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(o.err.find("warning"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace cordon::e2e
