// `cordon sandbox ...` edits the user config atomically and refuses bad requests.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using SandboxCommand = CliTest;

TEST_F(SandboxCommand, StatusWithoutAConfigShowsTheDefaults) {
  Outcome o = Cordon({"sandbox", "status"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("workspace_write"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("deny"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(ConfigPath()));
}

TEST_F(SandboxCommand, ChangingModeAndNetworkWritesThePrivateConfigFile) {
  ASSERT_EQ(Cordon({"sandbox", "read_only"}).exit_code, 0);
  ASSERT_EQ(Cordon({"sandbox", "network", "allow"}).exit_code, 0);
  auto j = nlohmann::json::parse(ReadFile(ConfigPath()));
  EXPECT_EQ(j["sandbox"]["mode"], "read_only");
  EXPECT_EQ(j["sandbox"]["network"], "allow");
  struct stat st {};
  ASSERT_EQ(stat(ConfigPath().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(Cordon({"sandbox", "status"}).out.find("read_only"), std::string::npos);
}

TEST_F(SandboxCommand, UnknownRequestIsRefusedAndTheFileIsUntouched) {
  WriteConfig(R"({"sandbox": {"mode": "read_only"}})");
  Outcome o = Cordon({"sandbox", "network", "maybe"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("maybe"), std::string::npos) << o.err;
  EXPECT_EQ(ReadFile(ConfigPath()), R"({"sandbox": {"mode": "read_only"}})");
  EXPECT_EQ(Cordon({"sandbox", "sideways"}).exit_code, 125);
  Outcome caches = Cordon({"sandbox", "tool-caches", "global"});
  EXPECT_EQ(caches.exit_code, 125);
  EXPECT_NE(caches.err.find("global"), std::string::npos) << caches.err;
  Outcome home = Cordon({"sandbox", "home", "visible"});
  EXPECT_EQ(home.exit_code, 125);
  EXPECT_NE(home.err.find("visible"), std::string::npos) << home.err;
  EXPECT_EQ(ReadFile(ConfigPath()), R"({"sandbox": {"mode": "read_only"}})");
}

TEST_F(SandboxCommand, ABrokenConfigIsReportedAndNotOverwritten) {
  WriteConfig("{ not json");
  Outcome o = Cordon({"sandbox", "off"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("config.json"), std::string::npos) << o.err;
  EXPECT_EQ(ReadFile(ConfigPath()), "{ not json");
}

// Each subcommand changes its one setting and keeps the rest as written: `~/` paths stay
// `~/` (a config shared between machines or homes must not end up naming this home's paths),
// keys stay in their order. The twin: the setting itself is changed every time.
TEST_F(SandboxCommand, EachSubcommandKeepsTheRestOfTheFileAsWritten) {
  std::filesystem::create_directories(home_ / "cache");
  WriteConfig(R"({"sandbox": {"writable_roots": ["~/cache"], "hidden_paths": ["~/.vault-token"]},)"
              R"( "environment": {"pass": ["JAVA_HOME"]}})");
  const std::pair<std::vector<std::string>, std::string> steps[] = {
      {{"sandbox", "off"}, R"("mode": "off")"},
      {{"sandbox", "read_only"}, R"("mode": "read_only")"},
      {{"sandbox", "network", "allow"}, R"("network": "allow")"},
      {{"sandbox", "network", "deny"}, R"("network": "deny")"},
      {{"sandbox", "network", "domains"}, R"("network": "domains")"},
      {{"sandbox", "network", "allow-domain", "pkg.test"}, R"("pkg.test")"},
      {{"sandbox", "network", "parent-proxy", "http://127.0.0.1:3128"},
       R"("parent_proxy": "http://127.0.0.1:3128")"},
      {{"sandbox", "workspace_write"}, R"("mode": "workspace_write")"},
      {{"sandbox", "home", "read_only"}, R"("home": "read_only")"},
      {{"sandbox", "home", "hidden"}, R"("home": "hidden")"},
      {{"sandbox", "home", "auto"}, R"("home": "auto")"},
      {{"sandbox", "tool-caches", "workspace"}, R"("tool_caches": "workspace")"},
      {{"sandbox", "tool-caches", "off"}, R"("tool_caches": "off")"},
  };
  for (const auto& [args, set] : steps) {
    Invocation inv = CordonInvocation({});
    inv.argv.insert(inv.argv.end(), args.begin(), args.end());
    const Outcome o = RunBinary(inv);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const std::string text = ReadFile(ConfigPath());
    EXPECT_NE(text.find(set), std::string::npos) << text;
    EXPECT_NE(text.find(R"("~/cache")"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("~/.vault-token")"), std::string::npos) << text;
    EXPECT_EQ(text.find(home_.string()), std::string::npos) << text;
    EXPECT_LT(text.find("writable_roots"), text.find("hidden_paths")) << text;
    EXPECT_LT(text.find("\"sandbox\""), text.find("environment")) << text;
  }
  EXPECT_EQ(Cordon({"sandbox", "status"}).exit_code, 0);
}

TEST_F(SandboxCommand, DomainsAreAddedCanonicalOnceAndShownByStatus) {
  ASSERT_EQ(Cordon({"sandbox", "network", "domains"}).exit_code, 0);
  for (int i = 0; i < 2; ++i) {
    Outcome o = Cordon({"sandbox", "network", "allow-domain", "Registry.Example."});
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  ASSERT_EQ(Cordon({"sandbox", "network", "deny-domain", "*.cdn.example:25"}).exit_code, 0);
  auto j = nlohmann::json::parse(ReadFile(ConfigPath()));
  EXPECT_EQ(j["sandbox"]["network"], "domains");
  EXPECT_EQ(j["sandbox"]["domains"]["allow"], nlohmann::json::array({"registry.example"}));
  EXPECT_EQ(j["sandbox"]["domains"]["deny"], nlohmann::json::array({"*.cdn.example:25"}));
  Outcome status = Cordon({"sandbox", "status"});
  EXPECT_NE(status.out.find("network:               domains"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("domains allow:         registry.example"), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("domains deny:          *.cdn.example:25"), std::string::npos)
      << status.out;
}

TEST_F(SandboxCommand, ABadDomainOrUnknownListIsRefusedAndTheFileIsUntouched) {
  WriteConfig(R"({"sandbox": {"network": "domains"}})");
  Outcome wide = Cordon({"sandbox", "network", "allow-domain", "*.org"});
  EXPECT_EQ(wide.exit_code, 125);
  EXPECT_NE(wide.err.find("whole top-level domain"), std::string::npos) << wide.err;
  Outcome list = Cordon({"sandbox", "network", "deny-domain", "@nope"});
  EXPECT_EQ(list.exit_code, 125);
  EXPECT_NE(list.err.find("unknown domain list \"@nope\""), std::string::npos) << list.err;
  EXPECT_EQ(Cordon({"sandbox", "network", "allow-domain"}).exit_code, 125);
  EXPECT_EQ(ReadFile(ConfigPath()), R"({"sandbox": {"network": "domains"}})");
}

// The parent proxy: set, shown, and a value the run would refuse is refused before the file is
// written (issue 24).
TEST_F(SandboxCommand, TheParentProxyIsSetCheckedAndShown) {
  WriteConfig(R"({"sandbox": {"network": "domains"}})");
  for (const char* bad : {"https://proxy.test:443", "http://user:pw@proxy.test:3128",
                          "http://proxy.test:3128/path"}) {
    Outcome o = Cordon({"sandbox", "network", "parent-proxy", bad});
    EXPECT_EQ(o.exit_code, 125) << bad;
    EXPECT_NE(o.err.find("cordon: "), std::string::npos) << o.err;
    EXPECT_EQ(ReadFile(ConfigPath()), R"({"sandbox": {"network": "domains"}})") << bad;
  }
  for (const char* good : {"none", "http://proxy.test:3128", "auto"}) {
    Outcome o = Cordon({"sandbox", "network", "parent-proxy", good});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.out.find(std::string("parent_proxy:          ") + good), std::string::npos)
        << o.out;
    EXPECT_EQ(nlohmann::json::parse(ReadFile(ConfigPath()))["sandbox"]["parent_proxy"], good);
  }
  EXPECT_EQ(Cordon({"sandbox", "network", "parent-proxy"}).exit_code, 125);
}

TEST_F(SandboxCommand, TheNewModeAppliesToTheNextRun) {
  ASSERT_EQ(Cordon({"sandbox", "read_only"}).exit_code, 0);
  EXPECT_NE(Cordon({"run", "-c", "touch f"}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(workspace_ / "f"));
  ASSERT_EQ(Cordon({"sandbox", "workspace_write"}).exit_code, 0);
  EXPECT_EQ(Cordon({"run", "-c", "touch f"}).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(workspace_ / "f"));
}

}  // namespace
}  // namespace cordon::e2e
