// Domain patterns: every accepted form and its canonical text, and each refused form with a
// message that names what was written.
#include "net/domain_pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cordon::net {
namespace {

using ::testing::HasSubstr;

std::string Canonical(std::string_view text) {
  Result<DomainPattern> parsed = ParseDomainPattern(text);
  EXPECT_TRUE(parsed) << text << ": " << parsed.error().message;
  return parsed ? parsed->ToString() : std::string();
}

std::string ErrorFor(std::string_view text) {
  Result<DomainPattern> parsed = ParseDomainPattern(text);
  EXPECT_FALSE(parsed) << text << " was accepted as " << parsed->ToString();
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
  return parsed.error().message;
}

TEST(DomainPattern, NamesAreLowerCasedAndLoseOneTrailingDot) {
  EXPECT_EQ(Canonical("Registry.EXAMPLE.org."), "registry.example.org");
  EXPECT_EQ(Canonical("pkg"), "pkg");  // test networks use one-label names
  EXPECT_EQ(Canonical("under_score.example"), "under_score.example");
  Result<DomainPattern> name = ParseDomainPattern("example.org");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->kind, DomainPattern::Kind::kName);
  EXPECT_EQ(name->name, "example.org");
  EXPECT_EQ(name->port, 0);
  // Twin: two trailing dots are an empty label.
  EXPECT_THAT(ErrorFor("example.org.."), HasSubstr("empty labels"));
}

TEST(DomainPattern, WildcardsCoverNamesBelowAMultiLabelBase) {
  Result<DomainPattern> wild = ParseDomainPattern("*.Example.org");
  ASSERT_TRUE(wild);
  EXPECT_EQ(wild->kind, DomainPattern::Kind::kWildcard);
  EXPECT_EQ(wild->name, "example.org");
  EXPECT_EQ(wild->ToString(), "*.example.org");
  // Twins: a one-label base would open a whole top-level domain; '*' elsewhere means nothing.
  EXPECT_THAT(ErrorFor("*.org"), HasSubstr("whole top-level domain"));
  EXPECT_THAT(ErrorFor("*.org"), HasSubstr("\"*.org\""));
  EXPECT_THAT(ErrorFor("*"), HasSubstr("only as a whole first label"));
  EXPECT_THAT(ErrorFor("*."), HasSubstr("needs a domain"));
  EXPECT_THAT(ErrorFor("a.*.example.org"), HasSubstr("only as a whole first label"));
  EXPECT_THAT(ErrorFor("*example.org"), HasSubstr("only as a whole first label"));
  EXPECT_THAT(ErrorFor("*.*.example.org"), HasSubstr("only as a whole first label"));
}

TEST(DomainPattern, PortsFromOneTo65535) {
  EXPECT_EQ(Canonical("example.org:443"), "example.org:443");
  EXPECT_EQ(Canonical("*.example.org:8080"), "*.example.org:8080");
  EXPECT_EQ(Canonical("example.org:65535"), "example.org:65535");
  EXPECT_EQ(ParseDomainPattern("example.org:1")->port, 1);
  EXPECT_THAT(ErrorFor("example.org:0"), HasSubstr("port 0 is not from 1 to 65535"));
  EXPECT_THAT(ErrorFor("example.org:65536"), HasSubstr("not from 1 to 65535"));
  EXPECT_THAT(ErrorFor("example.org:99999999999"), HasSubstr("not a number"));
  EXPECT_THAT(ErrorFor("example.org:"), HasSubstr("not a number"));
  EXPECT_THAT(ErrorFor("example.org:https"), HasSubstr("\"https\" is not a number"));
  EXPECT_THAT(ErrorFor("example.org:+1"), HasSubstr("not a number"));
  EXPECT_THAT(ErrorFor(":443"), HasSubstr("no host name"));
}

TEST(DomainPattern, AddressLiteralsInTheirUsualForms) {
  EXPECT_EQ(Canonical("192.0.2.7"), "192.0.2.7");
  EXPECT_EQ(Canonical("192.0.2.7:443"), "192.0.2.7:443");
  EXPECT_EQ(Canonical("[2001:DB8:0::1]"), "[2001:db8::1]");
  EXPECT_EQ(Canonical("[2001:db8::1]:443"), "[2001:db8::1]:443");
  // A v4-mapped address is the IPv4 address.
  EXPECT_EQ(Canonical("[::ffff:192.0.2.7]"), "192.0.2.7");
  EXPECT_EQ(ParseDomainPattern("192.0.2.7")->kind, DomainPattern::Kind::kAddress);
  // Twins: IPv6 without brackets, bad literals, and names that clients read as addresses.
  EXPECT_THAT(ErrorFor("2001:db8::1"), HasSubstr("in brackets"));
  EXPECT_THAT(ErrorFor("[2001:db8::zz]"), HasSubstr("is not an IPv6 address"));
  EXPECT_THAT(ErrorFor("[2001:db8::1"), HasSubstr("no closing"));
  EXPECT_THAT(ErrorFor("[2001:db8::1]443"), HasSubstr("expected ':PORT'"));
  EXPECT_THAT(ErrorFor("[::1]:0"), HasSubstr("not from 1 to 65535"));
  EXPECT_THAT(ErrorFor("127.1"), HasSubstr("reads as an IP address"));
  EXPECT_THAT(ErrorFor("192.0.2.300"), HasSubstr("reads as an IP address"));
  // The unspecified address is the host itself (a connect there reaches its services); the
  // address next to it is one like any other.
  EXPECT_THAT(ErrorFor("0.0.0.0"), HasSubstr("this host itself"));
  EXPECT_THAT(ErrorFor("0.1.2.3:80"), HasSubstr("this host itself"));
  EXPECT_THAT(ErrorFor("[::]"), HasSubstr("this host itself"));
  EXPECT_THAT(ErrorFor("[::ffff:0.0.0.0]:443"), HasSubstr("this host itself"));
  EXPECT_EQ(Canonical("1.0.0.0"), "1.0.0.0");
  EXPECT_EQ(Canonical("[::2]"), "[::2]");
}

TEST(DomainPattern, UrlsPathsAndWhiteSpaceAreRefusedByName) {
  EXPECT_THAT(ErrorFor("https://example.org"), HasSubstr("without \"https://\""));
  EXPECT_THAT(ErrorFor("example.org/simple"), HasSubstr("without a path"));
  EXPECT_THAT(ErrorFor(""), HasSubstr("empty"));
  EXPECT_THAT(ErrorFor(" example.org"), HasSubstr("white space"));
  EXPECT_THAT(ErrorFor("exa mple.org"), HasSubstr("\"exa mple.org\""));
  EXPECT_THAT(ErrorFor("user@example.org"), HasSubstr("only letters, digits"));
  EXPECT_THAT(ErrorFor("@js"), HasSubstr("is not a pattern"));
  // Control characters never reach the message raw.
  const std::string escaped = ErrorFor("a\x1b[31m.org");
  EXPECT_THAT(escaped, HasSubstr("\\x1b"));
  EXPECT_EQ(escaped.find('\x1b'), std::string::npos);
}

TEST(DomainPattern, LabelAndNameLengthsFollowDns) {
  const std::string label63(63, 'a');
  EXPECT_EQ(Canonical(label63 + ".org"), label63 + ".org");
  EXPECT_THAT(ErrorFor(std::string(64, 'a') + ".org"), HasSubstr("longer than 63"));
  std::string name253;
  while (name253.size() < 250) name253 += "abcdefghi.";
  name253 += "org";  // 253 characters
  ASSERT_EQ(name253.size(), 253u);
  EXPECT_EQ(Canonical(name253), name253);
  EXPECT_THAT(ErrorFor("x" + name253), HasSubstr("at most 253"));
  EXPECT_THAT(ErrorFor("-lead.example.org"), HasSubstr("starts or ends with '-'"));
  EXPECT_THAT(ErrorFor("trail-.example.org"), HasSubstr("starts or ends with '-'"));
  EXPECT_EQ(Canonical("mid-dle.example.org"), "mid-dle.example.org");
}

TEST(DomainPattern, EveryCanonicalTextReadsBackToTheSamePattern) {
  for (std::string_view text : {"example.org", "*.example.org:443", "pkg", "192.0.2.7:8443",
                                "[2001:db8::1]", "[2001:db8::1]:22", "Example.ORG.:80"}) {
    Result<DomainPattern> parsed = ParseDomainPattern(text);
    ASSERT_TRUE(parsed) << text;
    Result<DomainPattern> again = ParseDomainPattern(parsed->ToString());
    ASSERT_TRUE(again) << parsed->ToString();
    EXPECT_EQ(*again, *parsed) << text;
  }
}

}  // namespace
}  // namespace cordon::net

namespace cordon::net {
namespace {

TEST(HostNameTest, OnlyCanonicalHostNames) {
  for (const char* good : {"pkg.test", "a", "x-y_z.example.org", "0.1.2.3.in-addr.arpa"}) {
    EXPECT_TRUE(IsHostName(good)) << good;
  }
  EXPECT_TRUE(IsHostName(std::string(63, 'a') + ".test"));
  EXPECT_FALSE(IsHostName(std::string(64, 'a') + ".test"));
  std::string long_name;
  while (long_name.size() < 250) long_name += "abcdefghi.";
  EXPECT_FALSE(IsHostName(long_name + "test"));
  EXPECT_TRUE(IsHostName("1.0.0.127.in-addr.arpa"));
  EXPECT_TRUE(IsHostName("a.0x"));   // not a number: "0x" alone
  EXPECT_TRUE(IsHostName("a.b12"));  // letters and digits
  for (const char* bad : {"127.0.0.1", "127.1", "10", "0x7f000001", "a.0x7f", "a.123", "", ".",
                          "Pkg.test", "pkg.test.", ".pkg.test", "pkg..test", "pkg test",
                          "pkg.test\r\nHost: x", "pkg.test:80", "[::1]", "*.test"}) {
    EXPECT_FALSE(IsHostName(bad)) << bad;
  }
}

}  // namespace
}  // namespace cordon::net
