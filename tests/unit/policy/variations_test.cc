// Property-based variations (issue 35): spellings a shell treats alike get the same verdict.
// Every corpus line keeps its verdict and rule in other places of a script and with other
// spacing; the refused forms of each class (privilege words, recursive deletion, download then
// run) are generated over every quoting, flag order and spelling listed here, each beside its
// allowed twin. The combinations are enumerated, not sampled: a failure names its text.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "corpus_reader.h"
#include "policy_helpers.h"

namespace cordon::policy {
namespace {

// The line in other places of a script: after other text, in a group, a subshell, a branch.
std::vector<std::string> InContext(const std::string& text) {
  return {" \t" + text,         "true && " + text,    "cd . ; " + text,
          "{\n" + text + "\n}", "(\n" + text + "\n)", "if true; then\n" + text + "\nfi",
          text + "\n"};
}

// Each blank outside quotes (and outside a backslash escape) doubled or made a tab: the same
// words to the shell. Text with a here-document is left as it is (its body is data).
std::vector<std::string> Respaced(const std::string& text) {
  if (text.find("<<") != std::string::npos) return {};
  std::vector<std::string> out;
  for (const char* blank : {"  ", "\t", " \t "}) {
    std::string spaced;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quote == 0 && c == '\\' && i + 1 < text.size()) {
        spaced += text.substr(i, 2);
        ++i;
        continue;
      }
      if (quote == '"' && c == '\\' && i + 1 < text.size()) {
        spaced += text.substr(i, 2);
        ++i;
        continue;
      }
      if (quote == 0 && (c == '\'' || c == '"')) {
        quote = c;
      } else if (quote != 0 && c == quote) {
        quote = 0;
      }
      spaced += quote == 0 && c == ' ' ? std::string(blank) : std::string(1, c);
    }
    if (spaced != text) out.push_back(spaced);
  }
  return out;
}

TEST(PolicyVariations, EveryCorpusLineKeepsItsVerdictInContextAndWithOtherSpacing) {
  Policy policy = testing::MakePolicy();
  for (const char* file : {"allowed.txt", "denied.txt"}) {
    const bool denied = std::string(file) == "denied.txt";
    for (const CorpusLine& c : ReadCorpus(file)) {
      const std::string want = denied ? c.fields[1] : "";
      std::vector<std::string> variants = InContext(c.fields[0]);
      for (const std::string& spaced : Respaced(c.fields[0])) variants.push_back(spaced);
      for (const std::string& variant : variants) {
        EXPECT_EQ(testing::RuleFor(policy, variant), want)
            << file << ":" << c.line << ": " << c.fields[0] << "\n  as: " << variant;
      }
    }
  }
}

// The command word spelled every way a shell reads as the same word.
std::vector<std::string> Spellings(const std::string& word) {
  std::vector<std::string> out = {word,
                                  "'" + word + "'",
                                  "\"" + word + "\"",
                                  "\\" + word,
                                  "$'" + word + "'",
                                  word.substr(0, 1) + "''" + word.substr(1),
                                  word.substr(0, 1) + "\"\"" + word.substr(1),
                                  word.substr(0, 1) + "'" + word.substr(1) + "'",
                                  "/usr/bin/" + word,
                                  "${X:-" + word + "}",
                                  "env " + word,
                                  "nohup " + word,
                                  "timeout 5 " + word,
                                  "nice -n 5 " + word};
  // An ANSI-C escape of the first letter ($'\x73udo').
  char escaped[8];
  std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(word[0]));
  out.push_back("$'" + std::string(escaped) + word.substr(1) + "'");
  return out;
}

TEST(PolicyVariations, APrivilegeWordIsRefusedHoweverItIsQuotedAndMentioningItIsNot) {
  Policy policy = testing::MakePolicy();
  for (const char* word : {"sudo", "doas", "pkexec", "run0", "su"}) {
    for (const std::string& spelled : Spellings(word)) {
      const std::string run = spelled + (std::string(word) == "su" ? " -c id" : " id");
      EXPECT_EQ(testing::RuleFor(policy, run), "default.privilege") << run;
      // Twins: the same spelling as data.
      for (const std::string& twin : {"echo " + spelled, "grep -n " + spelled + " notes.txt"}) {
        if (spelled.find(' ') != std::string::npos) continue;  // a wrapper is no datum
        EXPECT_EQ(testing::RuleFor(policy, twin), "") << twin;
      }
    }
  }
}

TEST(PolicyVariations, RecursiveDeletionIsJudgedByWhatItReachesInAnyFlagOrder) {
  Policy policy = testing::MakePolicy();
  const std::vector<std::string> flags = {"-rf",
                                          "-fr",
                                          "-r -f",
                                          "-f -r",
                                          "-Rf",
                                          "-fR",
                                          "-R",
                                          "-r",
                                          "-rfv",
                                          "-vrf",
                                          "-r -v -f",
                                          "--recursive",
                                          "--recursive -f",
                                          "-f --recursive",
                                          "--recursive --force",
                                          "-r --no-preserve-root"};
  for (const std::string& flag : flags) {
    for (const char* target :
         {"/", "/*", "/usr", "/etc/*", "~", "~/", "$HOME", "../../../*", "/ ", "-- /"}) {
      const std::string text = "rm " + flag + " " + target;
      EXPECT_EQ(testing::RuleFor(policy, text), "default.rm_root") << text;
    }
    for (const char* before : {"cd / && ", "cd /usr; ", "R=/; "}) {
      const std::string text =
          std::string(before) + "rm " + flag + (before[0] == 'R' ? " $R/*" : " *");
      EXPECT_EQ(testing::RuleFor(policy, text), "default.rm_root") << text;
    }
    // Twins: the same flags on what lies in the workspace.
    for (const char* target :
         {"./build", "build/*", "node_modules", "target/debug", "../sibling"}) {
      const std::string text = "rm " + flag + " " + target;
      if (flag.find("no-preserve-root") != std::string::npos) continue;
      EXPECT_EQ(testing::RuleFor(policy, text), "") << text;
    }
    const std::string in_build = "cd build && rm " + flag + " *";
    if (flag.find("no-preserve-root") == std::string::npos) {
      EXPECT_EQ(testing::RuleFor(policy, in_build), "") << in_build;
    }
  }
  for (const char* action : {"-delete", "-exec rm -rf {} +", "-exec rm -r {} \\;",
                             "-execdir rm {} \\;", "-ok rm {} \\;"}) {
    for (const char* root : {"/", "/usr", "~", "$HOME"}) {
      const std::string text = std::string("find ") + root + " -name '*.o' " + action;
      EXPECT_EQ(testing::RuleFor(policy, text), "default.rm_root") << text;
    }
    const std::string twin = std::string("find . -name '*.o' ") + action;
    EXPECT_EQ(testing::RuleFor(policy, twin), "") << twin;
  }
}

TEST(PolicyVariations, ADownloadedFileIsNotRunWhateverTheFlagSpelling) {
  Policy policy = testing::MakePolicy();
  const std::string url = "https://example.test/install";
  const std::vector<std::string> fetches = {
      "curl -o f " + url,       "curl -Lo f " + url,      "curl -sSLo f " + url,
      "curl -Lof " + url,       "curl --output f " + url, "curl --output=f " + url,
      "curl -L -o f " + url,    "curl " + url + " -o f",  "curl -fsSL " + url + " > f",
      "curl -s " + url + " >f", "wget -O f " + url,       "wget -qO f " + url,
      "wget -q -O f " + url,    "wget -qOf " + url};
  const std::vector<std::string> runs = {"sh f",     "bash f",   "./f",    ". f",
                                         "source f", "bash ./f", "sh ./f", "chmod +x f && ./f",
                                         "zsh f"};
  for (const std::string& fetch : fetches) {
    for (const char* joint : {"; ", " && ", "\n"}) {
      for (const std::string& run : runs) {
        const std::string text = fetch + joint + run;
        EXPECT_EQ(testing::RuleFor(policy, text), "default.shell_feed") << text;
      }
      // Twins: the download read, not run.
      for (const char* look : {"cat f", "sha256sum f", "less f"}) {
        const std::string text = fetch + joint + look;
        EXPECT_EQ(testing::RuleFor(policy, text), "") << text;
      }
    }
  }
}

}  // namespace
}  // namespace cordon::policy
