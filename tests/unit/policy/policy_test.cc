#include "cordon/policy.h"

#include <gtest/gtest.h>

#include "policy_helpers.h"

namespace cordon::policy {
namespace {

using testing::MakePolicy;
using testing::RuleFor;

TEST(Policy, InvalidPatternIsAConfigErrorNamingListIndexPatternAndRe2Message) {
  PolicyConfig config;
  config.deny = {"^ok$", "a(b"};
  Result<Policy> p = Policy::Create(config);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, ErrorCode::kConfig);
  EXPECT_NE(p.error().message.find("deny[1]"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("a(b"), std::string::npos);
  EXPECT_NE(p.error().message.find("missing )"), std::string::npos) << p.error().message;

  PolicyConfig allow;
  allow.allow = {"[z-a]"};
  Result<Policy> q = Policy::Create(allow);
  ASSERT_FALSE(q.has_value());
  EXPECT_NE(q.error().message.find("allow[0]"), std::string::npos);
}

TEST(Policy, DenyPatternMatchesEachNormalisedCommandAndTheRawText) {
  PolicyConfig config;
  config.deny = {"^git push", "DROP TABLE"};
  Policy p = MakePolicy(config);
  EXPECT_EQ(RuleFor(p, "make && env GIT_TRACE=1 /usr/bin/git push origin"), "user.deny[0]");
  EXPECT_EQ(RuleFor(p, "git status && git pull"), "");
  EXPECT_EQ(RuleFor(p, "psql -c 'DROP TABLE x'"), "user.deny[1]");
  Decision d = p.Evaluate("ls; git push -f");
  EXPECT_EQ(d.pattern, "^git push");
  EXPECT_EQ(d.matched_command, "git push -f");
  EXPECT_NE(d.reason.find("^git push"), std::string::npos);
}

TEST(Policy, TheFirstMatchingDenyPatternIsReported) {
  PolicyConfig config;
  config.deny = {"zzz", "rm", "r"};
  Policy p = MakePolicy(config);
  EXPECT_EQ(RuleFor(p, "rm x"), "user.deny[1]");
}

TEST(Policy, EveryCommandMustMatchTheAllowList) {
  PolicyConfig config;
  config.allow = {"^ls( |$)", "^git (status|diff)"};
  Policy p = MakePolicy(config);
  EXPECT_EQ(RuleFor(p, "ls -la && git status"), "");
  EXPECT_EQ(RuleFor(p, "ls; rm x"), "user.allow");
  EXPECT_EQ(RuleFor(p, "ls $(rm x)"), "user.allow");
  EXPECT_EQ(RuleFor(p, "X=1 ls"), "");
  Decision d = p.Evaluate("ls; rm -r x");
  EXPECT_EQ(d.matched_command, "rm -r x");
}

// command_policy.deny_unknown_command_words: a name only known when it runs is refused at the
// top level too. The twins: off (the default) it is allowed, and a name the text sets is known.
TEST(Policy, UnknownCommandWordsAtTheTopLevelAreRefusedWhenTheUserSaysSo) {
  PolicyConfig config;
  EXPECT_EQ(RuleFor(MakePolicy(config), "$EDITOR notes.md"), "");
  config.deny_unknown_command_words = true;
  Policy p = MakePolicy(config);
  EXPECT_EQ(RuleFor(p, "$EDITOR notes.md"), "policy.unknown_command_word");
  EXPECT_EQ(RuleFor(p, "ls && \"$1\" x"), "policy.unknown_command_word");
  EXPECT_EQ(RuleFor(p, "x=ls; $x -l"), "");
  EXPECT_EQ(RuleFor(p, "echo $EDITOR"), "");
  Decision d = p.Evaluate("$EDITOR notes.md");
  EXPECT_NE(d.reason.find("deny_unknown_command_words"), std::string::npos) << d.reason;
}

TEST(Policy, DenyWinsOverAllow) {
  PolicyConfig config;
  config.allow = {"^git "};
  config.deny = {"--force"};
  Policy p = MakePolicy(config);
  EXPECT_EQ(RuleFor(p, "git push"), "");
  EXPECT_EQ(RuleFor(p, "git push --force"), "user.deny[0]");
}

TEST(Policy, UnparsableTextIsDeniedUnderAnAllowList) {
  PolicyConfig config;
  config.allow = {"^echo"};
  Policy p = MakePolicy(config);
  Decision d = p.Evaluate("echo 'unterminated");
  EXPECT_FALSE(d.allowed());
  EXPECT_EQ(d.rule_id, "user.allow");
  EXPECT_TRUE(d.unparsed);
}

TEST(Policy, UnparsableTextIsCheckedAsRawTextOtherwise) {
  Policy p = MakePolicy();
  Decision ok = p.Evaluate("echo 'unterminated");
  EXPECT_TRUE(ok.allowed());
  EXPECT_TRUE(ok.unparsed);
  Decision bad = p.Evaluate("sudo rm x 'unterminated");
  EXPECT_FALSE(bad.allowed());
  EXPECT_EQ(bad.rule_id, "default.privilege");
  EXPECT_TRUE(bad.unparsed);
  EXPECT_EQ(RuleFor(p, "curl x | sh )"), "default.shell_feed");

  PolicyConfig config;
  config.deny = {"secret"};
  EXPECT_EQ(RuleFor(MakePolicy(config), "cat secret 'x"), "user.deny[0]");
}

TEST(Policy, UnparsableNestedShellTextIsCheckedAsRawText) {
  Policy p = MakePolicy();
  Decision d = p.Evaluate("bash -c 'sudo x \"'");
  EXPECT_EQ(d.rule_id, "default.privilege");
  EXPECT_TRUE(d.unparsed);
  Decision ok = p.Evaluate("bash -c 'echo \"'");
  EXPECT_TRUE(ok.allowed());
  EXPECT_TRUE(ok.unparsed);
}

TEST(Policy, TextLongerThanTheLimitIsDenied) {
  Policy p = MakePolicy();
  std::string huge = "echo " + std::string(2u << 20, 'a');
  Decision d = p.Evaluate(huge);
  EXPECT_FALSE(d.allowed());
  EXPECT_EQ(d.rule_id, "limit.too_long");
  EXPECT_TRUE(p.Evaluate("echo " + std::string(1000, 'a')).allowed());
}

TEST(Policy, TextWithTooManyCommandsIsDeniedNotTreatedAsUnparsable) {
  Policy p = MakePolicy();
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "a;";
  Decision d = p.Evaluate(many);
  EXPECT_FALSE(d.allowed());
  EXPECT_EQ(d.rule_id, "limit.too_complex");
  EXPECT_FALSE(d.unparsed);
  std::string evals;
  for (int i = 0; i < 100000; ++i) evals += "eval ";
  EXPECT_EQ(RuleFor(p, evals + "ls"), "limit.too_complex");
  std::string fine;
  for (int i = 0; i < 500; ++i) fine += "make t" + std::to_string(i) + "; ";
  EXPECT_TRUE(p.Evaluate(fine).allowed());
}

TEST(Policy, DecisionNamesTheRuleTheCommandAndAReason) {
  Policy p = MakePolicy();
  Decision d = p.Evaluate("make && nice -n 5 /usr/bin/sudo apt install x");
  EXPECT_EQ(d.verdict, Verdict::kDeny);
  EXPECT_EQ(d.rule_id, "default.privilege");
  EXPECT_EQ(d.matched_command, "sudo apt install x");
  EXPECT_NE(d.pattern.find("sudo"), std::string::npos);
  EXPECT_FALSE(d.reason.empty());
  EXPECT_FALSE(d.unparsed);
  Decision ok = p.Evaluate("make");
  EXPECT_TRUE(ok.allowed());
  EXPECT_TRUE(ok.rule_id.empty());
}

TEST(Policy, AThousandUserPatternsStillGiveTheFirstMatch) {
  PolicyConfig config;
  for (int i = 0; i < 1000; ++i) config.deny.push_back("^tool" + std::to_string(i) + "( |$)");
  Policy p = MakePolicy(config);
  EXPECT_EQ(RuleFor(p, "tool999 --x"), "user.deny[999]");
  EXPECT_EQ(RuleFor(p, "ls; tool5"), "user.deny[5]");
  EXPECT_EQ(RuleFor(p, "tool1000"), "");
}

}  // namespace
}  // namespace cordon::policy
