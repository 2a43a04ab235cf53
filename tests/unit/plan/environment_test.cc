#include "plan/environment.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cordon::plan {
namespace {

bool Has(const std::vector<std::string>& env, const std::string& entry) {
  return std::find(env.begin(), env.end(), entry) != env.end();
}

bool HasName(const std::vector<std::string>& env, const std::string& name) {
  return std::any_of(env.begin(), env.end(),
                     [&](const std::string& e) { return e.starts_with(name + "="); });
}

const std::vector<std::string> kCaller = {"PATH=/opt/bin:/usr/bin",
                                          "LANG=C.UTF-8",
                                          "LC_ALL=C",
                                          "TERM=xterm",
                                          "CORDON_CANARY_SECRET=x",
                                          "DATABASE_URL=postgres://u:p@h/db",
                                          "LD_PRELOAD=/evil.so",
                                          "AWS_SECRET_ACCESS_KEY=k",
                                          "HOME=/root",
                                          "TMPDIR=/var/tmp/me",
                                          "NOEQUALS"};

TEST(Environment, PassesTheDefaultAllowListAndNothingElse) {
  auto env = BuildEnvironment(kCaller, {}, "/tmp/.cordon-home", "/tmp");
  EXPECT_TRUE(Has(env, "PATH=/opt/bin:/usr/bin"));
  EXPECT_TRUE(Has(env, "LANG=C.UTF-8"));
  EXPECT_TRUE(Has(env, "LC_ALL=C"));
  EXPECT_TRUE(Has(env, "TERM=xterm"));
  EXPECT_FALSE(HasName(env, "CORDON_CANARY_SECRET"));
  EXPECT_FALSE(HasName(env, "DATABASE_URL"));
  EXPECT_FALSE(HasName(env, "LD_PRELOAD"));
  EXPECT_FALSE(HasName(env, "AWS_SECRET_ACCESS_KEY"));
  EXPECT_FALSE(HasName(env, "NOEQUALS"));
}

TEST(Environment, HomeAndTmpdirArePrivateAndTheSandboxIsMarked) {
  auto env = BuildEnvironment(kCaller, {}, "/tmp/.cordon-home", "/tmp");
  EXPECT_TRUE(Has(env, "HOME=/tmp/.cordon-home"));
  EXPECT_FALSE(Has(env, "HOME=/root"));
  EXPECT_TRUE(Has(env, "TMPDIR=/tmp"));
  EXPECT_TRUE(Has(env, "CORDON_SANDBOX=1"));
}

// What the sandbox enforces is in the environment, for scripts to adapt, and no config or
// caller value can claim otherwise.
TEST(Environment, TheSandboxsFactsAreSaidAndCannotBeOverridden) {
  EnvironmentConfig config;
  config.set = {{"CORDON_SANDBOX_NETWORK", "allow"}};
  std::vector<std::string> caller = kCaller;
  caller.push_back("CORDON_SANDBOX_MODE=off");
  auto env = BuildEnvironment(
      caller, config, "/h", "/tmp", {},
      SandboxFacts(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny, HomeView::kHidden));
  EXPECT_TRUE(Has(env, "CORDON_SANDBOX_MODE=workspace_write"));
  EXPECT_TRUE(Has(env, "CORDON_SANDBOX_NETWORK=deny"));
  EXPECT_TRUE(Has(env, "CORDON_SANDBOX_HOME=hidden"));
  EXPECT_FALSE(Has(env, "CORDON_SANDBOX_NETWORK=allow"));
  EXPECT_FALSE(Has(env, "CORDON_SANDBOX_MODE=off"));
  const auto facts =
      SandboxFacts(SandboxMode::kReadOnly, NetworkPolicy::kAllow, HomeView::kReadOnly);
  EXPECT_EQ(facts, (std::vector<std::string>{"CORDON_SANDBOX_MODE=read_only",
                                             "CORDON_SANDBOX_NETWORK=allow", "CORDON_NETWORK=allow",
                                             "CORDON_SANDBOX_HOME=read_only"}));
}

TEST(Environment, ConfiguredPassAndSetAreHonoured) {
  EnvironmentConfig config;
  config.pass = {"DATABASE_URL", "LD_PRELOAD"};
  config.set = {{"CARGO_HOME", "/cache/cargo"}, {"LANG", "de_DE.UTF-8"}};
  auto env = BuildEnvironment(kCaller, config, "/h", "/tmp");
  EXPECT_TRUE(Has(env, "DATABASE_URL=postgres://u:p@h/db"));
  EXPECT_TRUE(Has(env, "LD_PRELOAD=/evil.so"));  // only because the user named it
  EXPECT_TRUE(Has(env, "CARGO_HOME=/cache/cargo"));
  EXPECT_TRUE(Has(env, "LANG=de_DE.UTF-8"));  // set overrides the caller's value
  EXPECT_FALSE(HasName(env, "CORDON_CANARY_SECRET"));
}

TEST(Environment, ConfigCannotMoveTheprivateHome) {
  EnvironmentConfig config;
  config.set = {{"HOME", "/root"}};
  auto env = BuildEnvironment(kCaller, config, "/tmp/.cordon-home", "/tmp");
  EXPECT_TRUE(Has(env, "HOME=/tmp/.cordon-home"));
  EXPECT_FALSE(Has(env, "HOME=/root"));
}

TEST(Environment, PathDefaultsWhenTheCallerHasNone) {
  auto env = BuildEnvironment({"LANG=C"}, {}, "/h", "/tmp");
  EXPECT_TRUE(Has(env, "PATH=" + std::string(kDefaultPath)));
  auto with_path = BuildEnvironment({"PATH=/x"}, {}, "/h", "/tmp");
  EXPECT_FALSE(Has(with_path, "PATH=" + std::string(kDefaultPath)));
}

TEST(Environment, TheFirstOccurrenceOfANameWinsAndNamesAreUnique) {
  auto env = BuildEnvironment({"TERM=first", "TERM=second"}, {}, "/h", "/tmp");
  EXPECT_TRUE(Has(env, "TERM=first"));
  EXPECT_FALSE(Has(env, "TERM=second"));
}

TEST(Environment, DefaultNamesAreExactOrLocalePrefixed) {
  EXPECT_TRUE(IsDefaultPassedName("LC_CTYPE"));
  EXPECT_TRUE(IsDefaultPassedName("NO_COLOR"));
  EXPECT_FALSE(IsDefaultPassedName("LC_"));
  EXPECT_FALSE(IsDefaultPassedName("PATHX"));
  EXPECT_FALSE(IsDefaultPassedName("GITHUB_TOKEN"));
}

// The host's extra certificate authorities pass, so that TLS works behind a corporate proxy;
// the twin: a name beside them that is not one of them does not.
TEST(Environment, TheHostsCertificateSettingsPass) {
  const auto env =
      BuildEnvironment({"SSL_CERT_FILE=/etc/corp/ca.pem", "NODE_EXTRA_CA_CERTS=/etc/corp/ca.pem",
                        "REQUESTS_CA_BUNDLE=/etc/corp/ca.pem", "SSL_CERT_PASSWORD=hunter2"},
                       {}, "/h", "/tmp");
  EXPECT_TRUE(Has(env, "SSL_CERT_FILE=/etc/corp/ca.pem"));
  EXPECT_TRUE(Has(env, "NODE_EXTRA_CA_CERTS=/etc/corp/ca.pem"));
  EXPECT_TRUE(Has(env, "REQUESTS_CA_BUNDLE=/etc/corp/ca.pem"));
  EXPECT_FALSE(Has(env, "SSL_CERT_PASSWORD=hunter2"));
}

}  // namespace
}  // namespace cordon::plan
