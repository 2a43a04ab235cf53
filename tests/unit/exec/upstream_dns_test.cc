// The broker's side of the resolver's lookups: the queries it makes for the host's resolver,
// and the denials it writes from the resolver's reports.
#include "exec/upstream_dns.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/dns_denials.h"

namespace cordon::exec {
namespace {

TEST(UpstreamDnsTest, QueryHoldsTheQuestionAloneWithRecursionDesired) {
  const std::vector<std::uint8_t> q = EncodeQuery("pkg.example.test", 28, 1, 0xabcd);
  const std::vector<std::uint8_t> expected = {
      0xab, 0xcd, 0x01, 0x00, 0,   1,   0,   0,   0,   0,   0,   0,  // id, RD, one question
      3,    'p',  'k',  'g',  7,   'e', 'x', 'a', 'm', 'p', 'l', 'e',
      4,    't',  'e',  's',  't', 0,   0,   28,  0,   1};  // AAAA, IN
  EXPECT_EQ(q, expected);
}

TEST(UpstreamDnsTest, NamesThatAreNoHostNamesAreNotEncoded) {
  EXPECT_FALSE(EncodeQuery("a_b-c.test", 1, 1, 1).empty());  // the twin of the refusals below
  for (const std::string& bad :
       {std::string(), std::string("a..test"), std::string(".test"), std::string("test."),
        std::string("a\\.b.test"), std::string("A.test"), std::string("a b.test"),
        std::string(64, 'a') + ".test", std::string(250, 'a') + ".test"}) {
    EXPECT_TRUE(EncodeQuery(bad, 1, 1, 1).empty()) << bad;
  }
}

TEST(DnsDenialsTest, ARefusalTheRulesContradictIsDropped) {
  const Result<net::DomainRules> rules =
      net::DomainRules::Parse({"*.pkg.test"}, {"secret.pkg.test"});
  ASSERT_TRUE(rules);
  EXPECT_FALSE(RefusedLookup(*rules, "mirror.pkg.test"));
  const std::optional<Denial> other = RefusedLookup(*rules, "other.test");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->rule, "sandbox.network: domains (not in sandbox.domains.allow)");
  EXPECT_NE(other->fix.find("--allow-domain other.test"), std::string::npos);
  const std::optional<Denial> denied = RefusedLookup(*rules, "secret.pkg.test");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->rule, "sandbox.domains.deny: secret.pkg.test");
  // Escaped bytes: refused by design, whatever the rules say of the text.
  const std::optional<Denial> escaped = RefusedLookup(*rules, "a\\.pkg.test");
  ASSERT_TRUE(escaped);
  EXPECT_NE(escaped->rule.find("characters host names do not have"), std::string::npos);
  const std::optional<Denial> long_name = RefusedLookup(*rules, std::string(600, '\\'));
  ASSERT_TRUE(long_name);
  EXPECT_EQ(long_name->target.size(), kMaxDeniedName);
}

}  // namespace
}  // namespace cordon::exec
