// The data-driven corpus: corpus/allowed.txt (commands from real development work that must
// be allowed) and corpus/denied.txt (evasions that must be denied, with the expected rule id).
// Every failing line is reported with its line number and its reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "corpus_reader.h"
#include "policy_helpers.h"

namespace cordon::policy {
namespace {

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
