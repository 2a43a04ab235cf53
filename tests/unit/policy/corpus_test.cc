// The data-driven corpus: corpus/allowed.txt (commands from real development work that must
// be allowed) and corpus/denied.txt (evasions that must be denied, with the expected rule id).
// Every failing line is reported with its line number and its reason.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "policy_helpers.h"

namespace cordon::policy {
namespace {

struct CorpusLine {
  int line = 0;
  std::vector<std::string> fields;  // tab-separated
};

// Lines are TAB-separated; "\n" in the command field stands for a newline. Blank lines and
// lines starting with "#" are skipped.
std::vector<CorpusLine> ReadCorpus(const std::string& name) {
  std::ifstream in(std::string(CORDON_POLICY_CORPUS_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << "cannot open " << name;
  std::vector<CorpusLine> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    CorpusLine c;
    c.line = n;
    std::size_t start = 0;
    for (;;) {
      std::size_t tab = line.find('\t', start);
      c.fields.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    std::string& cmd = c.fields[0];
    for (std::size_t p = cmd.find("\\n"); p != std::string::npos; p = cmd.find("\\n", p + 1)) {
      cmd.replace(p, 2, "\n");
    }
    out.push_back(std::move(c));
  }
  return out;
}

TEST(PolicyCorpus, EveryAllowedCommandIsAllowed) {
  Policy policy = testing::MakePolicy();
  std::vector<CorpusLine> lines = ReadCorpus("allowed.txt");
  EXPECT_GE(lines.size(), 300u);
  for (const CorpusLine& c : lines) {
    ASSERT_EQ(c.fields.size(), 2u) << "allowed.txt:" << c.line << ": want COMMAND<TAB># reason";
    Decision d = policy.Evaluate(c.fields[0]);
    EXPECT_TRUE(d.allowed()) << "allowed.txt:" << c.line << ": " << c.fields[0] << "\n  denied by "
                             << d.rule_id << " (" << d.matched_command << "); expected allowed "
                             << c.fields[1];
    EXPECT_FALSE(d.unparsed) << "allowed.txt:" << c.line << ": " << c.fields[0]
                             << "\n  did not parse";
  }
}

TEST(PolicyCorpus, EveryEvasionIsDeniedByTheExpectedRule) {
  Policy policy = testing::MakePolicy();
  std::vector<CorpusLine> lines = ReadCorpus("denied.txt");
  EXPECT_GE(lines.size(), 100u);
  for (const CorpusLine& c : lines) {
    ASSERT_EQ(c.fields.size(), 3u)
        << "denied.txt:" << c.line << ": want COMMAND<TAB>RULE_ID<TAB># reason";
    Decision d = policy.Evaluate(c.fields[0]);
    EXPECT_EQ(d.allowed() ? "(allowed)" : d.rule_id, c.fields[1])
        << "denied.txt:" << c.line << ": " << c.fields[0] << "\n  " << c.fields[2];
  }
}

}  // namespace
}  // namespace cordon::policy
