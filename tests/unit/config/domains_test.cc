// The domain lists of network "domains" in the config file, on the command line and through
// `cordon sandbox network allow-domain`: canonical, expanded, checked with the place named.
#include "config/domains.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "config/overrides.h"
#include "config/update.h"
#include "temp_dir.h"

namespace cordon::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::ReadFile;
using testing::TempDir;

using Strings = std::vector<std::string>;

Result<Config> Parse(std::string_view text) { return ParseConfigText(text, "config.json", Env{}); }

std::string ErrorFor(std::string_view text) {
  Result<Config> config = Parse(text);
  if (config) return "";
  EXPECT_EQ(config.error().code, ErrorCode::kConfig);
  return config.error().message;
}

TEST(DomainConfig, PatternsAreCanonicalAndListsExpandedInPlace) {
  Result<Config> config = Parse(R"({"sandbox": {"network": "domains",
      "domains": {"allow": ["@js", "Example.ORG.", "registry.example"],
                  "deny": ["[::ffff:192.0.2.7]:25"]},
      "domain_lists": {"js": ["Registry.Example", "*.cdn.example:443", "registry.example"]}}})");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->sandbox.network, NetworkPolicy::kDomains);
  // Repeats dropped, first kept.
  EXPECT_THAT(config->sandbox.allowed_domains,
              ElementsAre("registry.example", "*.cdn.example:443", "example.org"));
  EXPECT_THAT(config->sandbox.denied_domains, ElementsAre("192.0.2.7:25"));
  EXPECT_EQ(config->sandbox.domain_lists.at("js"),
            (Strings{"registry.example", "*.cdn.example:443"}));
}

TEST(DomainConfig, ListsAreKeptWithTheOtherNetworkPolicies) {
  Result<Config> config =
      Parse(R"({"sandbox": {"network": "deny", "domains": {"allow": ["pkg.test"]}}})");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->sandbox.network, NetworkPolicy::kDeny);
  EXPECT_THAT(config->sandbox.allowed_domains, ElementsAre("pkg.test"));
}

TEST(DomainConfig, ABadPatternIsNamedWithItsPlace) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"domains": {"allow": ["a.example", "b.example", "*.org"]}}})"),
            "config.json: /sandbox/domains/allow/2: invalid domain pattern \"*.org\": a wildcard "
            "on the one-label name \"org\" would allow a whole top-level domain; name the domains "
            "below it");
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domains": {"deny": ["https://x.example"]}}})"),
              HasSubstr("/sandbox/domains/deny/0: invalid domain pattern"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domain_lists": {"js": ["ok.example", "x/y"]}}})"),
              HasSubstr("/sandbox/domain_lists/js/1: invalid domain pattern \"x/y\""));
  // Twin: the same entries, valid.
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"domains": {"allow": ["a.example", "*.b.example"]}}})"), "");
}

TEST(DomainConfig, ParentProxyIsAutoNoneOrAnHttpUrl) {
  Result<Config> defaults = Parse("{}");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_EQ(defaults->sandbox.parent_proxy, "auto");
  for (const char* value : {"auto", "none", "http://proxy.example:3128", "192.0.2.7:8080"}) {
    Result<Config> config =
        Parse(std::string(R"({"sandbox": {"parent_proxy": ")") + value + R"("}})");
    ASSERT_TRUE(config) << value << ": " << config.error().message;
    EXPECT_EQ(config->sandbox.parent_proxy, value);
  }
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"parent_proxy": "socks5://proxy:1080"}})"),
              HasSubstr("config.json: /sandbox/parent_proxy: the parent proxy "
                        "sandbox.parent_proxy=socks5://proxy:1080 cannot be used"));
  const std::string credentials =
      ErrorFor(R"({"sandbox": {"parent_proxy": "http://me:pw@proxy:3128"}})");
  EXPECT_THAT(credentials, HasSubstr("credentials"));
  EXPECT_THAT(credentials, Not(HasSubstr("pw@")));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"parent_proxy": 3128}})"),
              HasSubstr("/sandbox/parent_proxy"));
}

TEST(DomainConfig, AskingTheParentByNameIsOffUnlessSet) {
  Result<Config> defaults = Parse("{}");
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_FALSE(defaults->sandbox.parent_proxy_by_name);
  Result<Config> on = Parse(R"({"sandbox": {"parent_proxy_by_name": true}})");
  ASSERT_TRUE(on) << on.error().message;
  EXPECT_TRUE(on->sandbox.parent_proxy_by_name);
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"parent_proxy_by_name": "yes"}})"),
              HasSubstr("/sandbox/parent_proxy_by_name"));
}

TEST(DomainConfig, ListReferencesMustNameAListAndListsCannotNest) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"domains": {"allow": ["@js"]},
                        "domain_lists": {"py": ["packages.example"]}}})"),
            "config.json: /sandbox/domains/allow/0: unknown domain list \"@js\": "
            "sandbox.domain_lists defines \"py\"");
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domains": {"deny": ["@js"]}}})"),
              HasSubstr("defines no lists"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domain_lists": {"a": ["x.example"], "b": ["@a"]}}})"),
              HasSubstr("/sandbox/domain_lists/b/0: a list may not name another list (\"@a\")"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domain_lists": {"a b": ["x.example"]}}})"),
              HasSubstr("/sandbox/domain_lists/a b: a list name is"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domain_lists": ["x.example"]}})"),
              HasSubstr("/sandbox/domain_lists: expected an object"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"domains": {"allowed": []}}})"),
              HasSubstr("unknown key \"allowed\" (did you mean \"allow\"?)"));
}

TEST(DomainConfig, ValidationRefusesAPatternALibraryCallerLeftInvalid) {
  Config config;
  config.sandbox.allowed_domains = {"ok.example", "@js"};  // not expanded
  Result<void> checked = CheckDomains(config.sandbox, "library");
  ASSERT_FALSE(checked);
  EXPECT_THAT(checked.error().message, HasSubstr("library: /sandbox/domains/allow/1:"));
  config.sandbox.allowed_domains = {"ok.example"};
  EXPECT_TRUE(CheckDomains(config.sandbox, "library"));
}

Config WithLists(NetworkPolicy network) {
  Config config;
  config.sandbox.network = network;
  config.sandbox.allowed_domains = {"file.example"};
  config.sandbox.domain_lists = {{"js", {"registry.example", "*.cdn.example"}}};
  return config;
}

TEST(DomainFlags, AllowDomainAddsToTheFileAndSelectsDomains) {
  for (NetworkPolicy file :
       {NetworkPolicy::kDeny, NetworkPolicy::kAllow, NetworkPolicy::kDomains}) {
    Config config = WithLists(file);
    ConfigOverrides flags;
    flags.allowed_domains = {"@js", "Extra.Example", "file.example"};
    ASSERT_TRUE(ApplyOverrides(config, flags, Env{})) << NetworkPolicyName(file);
    EXPECT_EQ(config.sandbox.network, NetworkPolicy::kDomains) << NetworkPolicyName(file);
    EXPECT_THAT(config.sandbox.allowed_domains,
                ElementsAre("file.example", "registry.example", "*.cdn.example", "extra.example"));
  }
}

TEST(DomainFlags, DenyDomainAloneNarrowsAllowButLeavesDenyClosed) {
  ConfigOverrides flags;
  flags.denied_domains = {"secret.example"};
  Config from_allow = WithLists(NetworkPolicy::kAllow);
  ASSERT_TRUE(ApplyOverrides(from_allow, flags, Env{}));
  EXPECT_EQ(from_allow.sandbox.network, NetworkPolicy::kDomains);
  EXPECT_THAT(from_allow.sandbox.denied_domains, ElementsAre("secret.example"));
  // Twin: a deny rule never opens the file's allow list on a network that was off.
  Config from_deny = WithLists(NetworkPolicy::kDeny);
  ASSERT_TRUE(ApplyOverrides(from_deny, flags, Env{}));
  EXPECT_EQ(from_deny.sandbox.network, NetworkPolicy::kDeny);
  EXPECT_THAT(from_deny.sandbox.denied_domains, ElementsAre("secret.example"));
}

TEST(DomainFlags, AnExplicitOtherNetworkContradictsThem) {
  Config config = WithLists(NetworkPolicy::kDeny);
  const Config before = config;
  ConfigOverrides flags;
  flags.network = NetworkPolicy::kAllow;
  flags.allowed_domains = {"x.example"};
  Result<void> applied = ApplyOverrides(config, flags, Env{});
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().message,
            "command line: --allow-domain needs --network domains, not --network allow (or leave "
            "--network out: --allow-domain selects domains)");
  EXPECT_EQ(config.sandbox.allowed_domains, before.sandbox.allowed_domains);
  flags.allowed_domains.clear();
  flags.denied_domains = {"x.example"};
  flags.network = NetworkPolicy::kDeny;
  EXPECT_THAT(ApplyOverrides(config, flags, Env{}).error().message,
              HasSubstr("--deny-domain needs --network domains, not --network deny"));
  // Twin: --network domains says the same thing and is fine.
  flags.network = NetworkPolicy::kDomains;
  ASSERT_TRUE(ApplyOverrides(config, flags, Env{}));
  EXPECT_EQ(config.sandbox.network, NetworkPolicy::kDomains);
}

TEST(DomainFlags, BadFlagValuesNameTheFlag) {
  Config config = WithLists(NetworkPolicy::kDomains);
  ConfigOverrides flags;
  flags.allowed_domains = {"*.com"};
  EXPECT_THAT(ApplyOverrides(config, flags, Env{}).error().message,
              HasSubstr("command line: --allow-domain \"*.com\": invalid domain pattern"));
  flags.allowed_domains = {"@py"};
  EXPECT_THAT(ApplyOverrides(config, flags, Env{}).error().message,
              HasSubstr("--allow-domain \"@py\": unknown domain list \"@py\": "
                        "sandbox.domain_lists defines \"js\""));
  EXPECT_THAT(config.sandbox.allowed_domains, ElementsAre("file.example"));
}

TEST(DomainUpdate, AllowDomainIsAddedOnceAndListReferencesStayAsWritten) {
  TempDir dir;
  const std::filesystem::path path =
      dir.Write("config.json", R"({"sandbox": {"domains": {"allow": ["@js"]},)"
                               R"( "domain_lists": {"js": ["registry.example"]}}})");
  const SettingChange add{"/sandbox/domains/allow", "extra.example", /*add_to_list=*/true};
  Result<Config> once = UpdateConfigFile(path, Env{}, add);
  ASSERT_TRUE(once) << once.error().message;
  EXPECT_THAT(once->sandbox.allowed_domains, ElementsAre("registry.example", "extra.example"));
  const std::string after_once = ReadFile(path);
  EXPECT_THAT(after_once, HasSubstr("\"@js\",\n        \"extra.example\""));
  ASSERT_TRUE(UpdateConfigFile(path, Env{}, add));
  EXPECT_EQ(ReadFile(path), after_once) << "a duplicate is not added twice";
  // The deny side is created when absent.
  Result<Config> denied = UpdateConfigFile(
      path, Env{}, SettingChange{"/sandbox/domains/deny", "@js", /*add_to_list=*/true});
  ASSERT_TRUE(denied) << denied.error().message;
  EXPECT_THAT(denied->sandbox.denied_domains, ElementsAre("registry.example"));
}

TEST(DomainUpdate, AnUnknownListIsRefusedAndTheFileKept) {
  TempDir dir;
  const std::filesystem::path path = dir.Write("config.json", "{}");
  Result<Config> result = UpdateConfigFile(
      path, Env{}, SettingChange{"/sandbox/domains/allow", "@nope", /*add_to_list=*/true});
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message, HasSubstr("unknown domain list \"@nope\""));
  EXPECT_EQ(ReadFile(path), "{}");
}

}  // namespace
}  // namespace cordon::config
