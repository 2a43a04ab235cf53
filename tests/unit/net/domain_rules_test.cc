// Domain rules: each allowed case next to its denied twin; deny wins; the decision names the
// rule that decided.
#include "net/domain_rules.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace cordon::net {
namespace {

DomainRules Rules(const std::vector<std::string>& allow, const std::vector<std::string>& deny) {
  Result<DomainRules> rules = DomainRules::Parse(allow, deny);
  EXPECT_TRUE(rules) << rules.error().message;
  return rules ? *rules : DomainRules();
}

Decision Allowed(std::string rule) { return Decision{.allowed = true, .rule = std::move(rule)}; }
Decision Denied(std::string rule) { return Decision{.allowed = false, .rule = std::move(rule)}; }
const Decision kNotListed{};

in6_addr V6(const char* text) {
  in6_addr a{};
  EXPECT_EQ(::inet_pton(AF_INET6, text, &a), 1) << text;
  return a;
}

in_addr V4(const char* text) {
  in_addr a{};
  EXPECT_EQ(::inet_pton(AF_INET, text, &a), 1) << text;
  return a;
}

TEST(DomainRules, AnExactNameIsAllowedAndItsNeighboursAreNot) {
  const DomainRules rules = Rules({"registry.example"}, {});
  EXPECT_EQ(rules.ForName("registry.example"), Allowed("registry.example"));
  EXPECT_EQ(rules.ForName("sub.registry.example"), kNotListed);
  EXPECT_EQ(rules.ForName("evilregistry.example"), kNotListed);
  EXPECT_EQ(rules.ForName("registry.example.evil"), kNotListed);
}

TEST(DomainRules, MatchingIgnoresCaseAndATrailingDot) {
  const DomainRules rules = Rules({"Registry.Example"}, {});
  EXPECT_EQ(rules.ForName("REGISTRY.example."), Allowed("registry.example"));
  EXPECT_EQ(rules.ForConnect("registry.EXAMPLE.", 443), Allowed("registry.example"));
  // Twin: two trailing dots are another (invalid) name.
  EXPECT_EQ(rules.ForName("registry.example.."), kNotListed);
}

TEST(DomainRules, AWildcardCoversNamesBelowItButNotItsBase) {
  const DomainRules rules = Rules({"*.cdn.example"}, {});
  EXPECT_EQ(rules.ForName("a.cdn.example"), Allowed("*.cdn.example"));
  EXPECT_EQ(rules.ForName("a.b.cdn.example"), Allowed("*.cdn.example"));
  EXPECT_EQ(rules.ForName("cdn.example"), kNotListed);
  EXPECT_EQ(rules.ForName("xcdn.example"), kNotListed);
  EXPECT_EQ(rules.ForName(".cdn.example"), kNotListed);
}

TEST(DomainRules, DenyWinsOverAllow) {
  const DomainRules rules = Rules({"*.example.org"}, {"secret.example.org"});
  EXPECT_EQ(rules.ForName("public.example.org"), Allowed("*.example.org"));
  EXPECT_EQ(rules.ForName("secret.example.org"), Denied("secret.example.org"));
  EXPECT_EQ(rules.ForConnect("secret.example.org", 443), Denied("secret.example.org"));
  // A deny wildcard refuses what an exact allow names.
  const DomainRules wide = Rules({"a.example.org"}, {"*.example.org"});
  EXPECT_EQ(wide.ForName("a.example.org"), Denied("*.example.org"));
}

TEST(DomainRules, ALookupSucceedsWhenSomePortOfTheNameIsAllowed) {
  const DomainRules rules = Rules({"git.example:22"}, {});
  EXPECT_EQ(rules.ForName("git.example"), Allowed("git.example:22"));
  EXPECT_EQ(rules.ForConnect("git.example", 22), Allowed("git.example:22"));
  EXPECT_EQ(rules.ForConnect("git.example", 443), kNotListed);
}

TEST(DomainRules, ADenyWithAPortRefusesThatPortButNotTheLookup) {
  const DomainRules rules = Rules({"api.example"}, {"api.example:25"});
  EXPECT_EQ(rules.ForName("api.example"), Allowed("api.example"));
  EXPECT_EQ(rules.ForConnect("api.example", 443), Allowed("api.example"));
  EXPECT_EQ(rules.ForConnect("api.example", 25), Denied("api.example:25"));
  // Twin: a deny without a port refuses the lookup itself.
  const DomainRules whole = Rules({"api.example"}, {"api.example"});
  EXPECT_EQ(whole.ForName("api.example"), Denied("api.example"));
}

TEST(DomainRules, NothingListedRefusesEverything) {
  const DomainRules none;
  EXPECT_EQ(none.ForName("example.org"), kNotListed);
  EXPECT_EQ(none.ForConnect("example.org", 443), kNotListed);
  EXPECT_EQ(none.ForAddress(V4("192.0.2.7"), 443), kNotListed);
  EXPECT_FALSE(none.ForName("example.org").allowed);
}

TEST(DomainRules, AnAddressIsAllowedOnlyWhenListedExactly) {
  const DomainRules rules = Rules({"192.0.2.7", "[2001:db8::1]:443", "example.org"}, {});
  EXPECT_EQ(rules.ForAddress(V4("192.0.2.7"), 80), Allowed("192.0.2.7"));
  EXPECT_EQ(rules.ForAddress(V4("192.0.2.8"), 80), kNotListed);
  EXPECT_EQ(rules.ForAddress(V6("2001:db8::1"), 443), Allowed("[2001:db8::1]:443"));
  EXPECT_EQ(rules.ForAddress(V6("2001:db8::1"), 80), kNotListed);
  // Names never allow an address, and addresses never allow a name.
  EXPECT_EQ(rules.ForName("192.0.2.7"), kNotListed);
  EXPECT_EQ(rules.ForConnect("192.0.2.7", 80), kNotListed);
}

TEST(DomainRules, AnIpv4AddressAndItsMappedFormAreTheSame) {
  const DomainRules rules = Rules({"192.0.2.7"}, {"[::ffff:192.0.2.9]"});
  EXPECT_EQ(rules.ForAddress(V6("::ffff:192.0.2.7"), 443), Allowed("192.0.2.7"));
  EXPECT_EQ(rules.ForAddress(V4("192.0.2.9"), 443), Denied("192.0.2.9"));
  // Twin: the IPv4-compatible (not mapped) form is another address.
  EXPECT_EQ(rules.ForAddress(V6("::192.0.2.7"), 443), kNotListed);
}

TEST(DomainRules, AnAddressDenyWinsAndHonoursItsPort) {
  const DomainRules rules = Rules({"192.0.2.7"}, {"192.0.2.7:25"});
  EXPECT_EQ(rules.ForAddress(V4("192.0.2.7"), 443), Allowed("192.0.2.7"));
  EXPECT_EQ(rules.ForAddress(V4("192.0.2.7"), 25), Denied("192.0.2.7:25"));
}

TEST(DomainRules, ParseRefusesTheFirstBadPatternAndRulesCompareByValue) {
  Result<DomainRules> bad = DomainRules::Parse({"example.org"}, {"*.com"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("\"*.com\""), std::string::npos) << bad.error().message;
  EXPECT_EQ(Rules({"Example.org"}, {}), Rules({"example.org."}, {}));
  EXPECT_NE(Rules({"example.org"}, {}), Rules({}, {"example.org"}));
  const DomainRules copy = Rules({"a.example"}, {"b.example"});
  DomainRules other = copy;
  EXPECT_EQ(other, copy);
  EXPECT_EQ(other.allow().size(), 1u);
  EXPECT_EQ(other.deny().front().ToString(), "b.example");
}

}  // namespace
}  // namespace cordon::net
