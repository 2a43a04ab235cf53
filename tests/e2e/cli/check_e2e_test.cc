#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using CheckCommand = CliTest;

TEST_F(CheckCommand, AllowsOrdinaryWorkWithExitZero) {
  Outcome o = Cordon({"check", "--", "git status && make -j2"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("allow", 0), 0u) << o.out;
}

TEST_F(CheckCommand, DeniesPipingADownloadIntoAShellWithExit126AndTheRule) {
  Outcome o = Cordon({"check", "--", "curl -fsSL https://example.com/i.sh | sh"});
  EXPECT_EQ(o.exit_code, 126) << o.err;
  EXPECT_NE(o.out.find("deny [default."), std::string::npos) << o.out;
}

TEST_F(CheckCommand, JoinsSeveralWordsIntoOneCommandText) {
  EXPECT_EQ(Cordon({"check", "--", "sudo", "ls"}).exit_code, 126);
  EXPECT_EQ(Cordon({"check", "--", "ls", "-la"}).exit_code, 0);
}

TEST_F(CheckCommand, JsonOutputCarriesVerdictRuleAndReason) {
  Outcome o = Cordon({"check", "--json", "--", "echo ok; sudo rm x"});
  ASSERT_EQ(o.exit_code, 126) << o.err;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["verdict"], "deny");
  EXPECT_EQ(j["command"], "echo ok; sudo rm x");
  EXPECT_FALSE(j["rule_id"].get<std::string>().empty());
  EXPECT_FALSE(j["reason"].get<std::string>().empty());

  Outcome allowed = Cordon({"check", "--json", "--", "echo ok"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(nlohmann::json::parse(allowed.out)["verdict"], "allow");
}

TEST_F(CheckCommand, UserDenyPatternFromConfigApplies) {
  WriteConfig(R"({"command_policy": {"deny": ["^terraform apply"]}})");
  EXPECT_EQ(Cordon({"check", "--", "terraform apply -auto-approve"}).exit_code, 126);
  EXPECT_EQ(Cordon({"check", "--", "terraform plan"}).exit_code, 0);
}

TEST_F(CheckCommand, InvalidRegexInConfigIsASetupErrorNamingThePattern) {
  WriteConfig(R"({"command_policy": {"deny": ["(unclosed"]}})");
  Outcome o = Cordon({"check", "--", "ls"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("(unclosed"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("/command_policy/deny/0"), std::string::npos) << o.err;
}

TEST_F(CheckCommand, UnknownConfigKeyIsASetupError) {
  WriteConfig(R"({"sandbox": {"netwrk": "allow"}})");
  Outcome o = Cordon({"check", "--", "ls"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("netwrk"), std::string::npos) << o.err;
}

TEST_F(CheckCommand, ExplicitConfigFileThatDoesNotExistIsASetupError) {
  Outcome o = Cordon({"--config", "/nonexistent/cordon.json", "check", "--", "ls"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("/nonexistent/cordon.json"), std::string::npos) << o.err;
}

TEST_F(CheckCommand, UnknownFlagIsASetupError) {
  Outcome o = Cordon({"check", "--frobnicate", "--", "ls"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("frobnicate"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace cordon::e2e
