#include "config/load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/overrides.h"
#include "config/to_json.h"
#include "config_matchers.h"
#include "temp_dir.h"

namespace cordon::config {
namespace {

using testing::ConfigsEqual;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;

Env HomeEnv(const std::filesystem::path& home) { return Env{.home = home.native()}; }

// The message of the error ParseConfigText gives for `text`, or "" when it parses.
std::string ErrorFor(std::string_view text, const Env& env = Env{.home = "/home/u"}) {
  Result<Config> config = ParseConfigText(text, "config.json", env);
  if (config) return "";
  EXPECT_EQ(config.error().code, ErrorCode::kConfig);
  return config.error().message;
}

TEST(LoadConfig, EmptyObjectGivesTheDocumentedDefaults) {
  Result<Config> config = ParseConfigText("{}", "config.json", Env{});
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->sandbox.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(config->sandbox.network, NetworkPolicy::kDeny);
  EXPECT_TRUE(config->sandbox.protect_git_metadata);
  EXPECT_TRUE(config->sandbox.allow_outside_sandbox);
  EXPECT_EQ(config->sandbox.backend, BackendChoice::kAuto);
  EXPECT_TRUE(config->command_policy.default_deny);
  EXPECT_EQ(config->limits.timeout, std::chrono::seconds(600));
  EXPECT_EQ(config->limits.output_bytes, 1024u * 1024u);
  EXPECT_TRUE(ConfigsEqual(*config, Config{}));
}

TEST(LoadConfig, EmptySectionsAlsoGiveDefaults) {
  Result<Config> config = ParseConfigText(
      R"({"sandbox": {}, "command_policy": {}, "limits": {}, "environment": {}})", "c", Env{});
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_TRUE(ConfigsEqual(*config, Config{}));
}

TEST(LoadConfig, ReadsEveryKey) {
  TempDir dir;
  std::filesystem::path cache = dir.MakeDir("cache");
  std::string text = R"({
    "sandbox": {"mode": "read_only", "network": "allow", "writable_roots": [")" +
                     cache.native() + R"("],
                "protect_git_metadata": false, "allow_outside_sandbox": false,
                "hidden_paths": ["/srv/secrets"], "home": "hidden",
                "readable_paths": ["/srv/docs", "~/notes"], "backend": "bwrap"},
    "command_policy": {"deny": ["^terraform destroy"], "allow": ["^git ", "^make"],
                       "default_deny": false, "nested_agents": ["aider"]},
    "limits": {"timeout_seconds": 1.5, "output_bytes": 4096},
    "environment": {"pass": ["TERM", "LANG"], "set": {"CI": "1", "PAGER": "cat"}}
  })";
  Result<Config> config = ParseConfigText(text, "config.json", Env{.home = "/home/u"});
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->sandbox.home, HomeView::kHidden);
  EXPECT_EQ(config->sandbox.readable_paths,
            (std::vector<std::filesystem::path>{"/srv/docs", "/home/u/notes"}));
  EXPECT_EQ(config->sandbox.mode, SandboxMode::kReadOnly);
  EXPECT_EQ(config->sandbox.network, NetworkPolicy::kAllow);
  EXPECT_EQ(config->sandbox.writable_roots, std::vector<std::filesystem::path>{cache});
  EXPECT_FALSE(config->sandbox.protect_git_metadata);
  EXPECT_FALSE(config->sandbox.allow_outside_sandbox);
  EXPECT_EQ(config->sandbox.hidden_paths, std::vector<std::filesystem::path>{"/srv/secrets"});
  EXPECT_EQ(config->sandbox.backend, BackendChoice::kBwrap);
  EXPECT_EQ(config->command_policy.deny, std::vector<std::string>{"^terraform destroy"});
  EXPECT_EQ(config->command_policy.allow, (std::vector<std::string>{"^git ", "^make"}));
  EXPECT_FALSE(config->command_policy.default_deny);
  EXPECT_EQ(config->command_policy.nested_agents, std::vector<std::string>{"aider"});
  EXPECT_EQ(config->limits.timeout, std::chrono::milliseconds(1500));
  EXPECT_EQ(config->limits.output_bytes, 4096u);
  EXPECT_EQ(config->environment.pass, (std::vector<std::string>{"TERM", "LANG"}));
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(config->environment.set, (std::vector<Pair>{{"CI", "1"}, {"PAGER", "cat"}}));
}

TEST(LoadConfig, UnknownKeyIsAnErrorThatSuggestsTheClosestKey) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"writeable_roots": []}})"),
            "config.json: /sandbox/writeable_roots: unknown key \"writeable_roots\" (did you mean "
            "\"writable_roots\"?); the keys allowed here are \"mode\", \"network\", "
            "\"domains\", \"domain_lists\", \"parent_proxy\", \"parent_proxy_by_name\", "
            "\"writable_roots\", "
            "\"protect_git_metadata\", "
            "\"protect_host_run_files\", "
            "\"host_run_files\", \"nested_project_depth\", \"allow_outside_sandbox\", "
            "\"hidden_paths\", \"home\", \"readable_paths\", \"tool_caches\", "
            "\"explain_file_denials\", \"backend\"");
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"mode": "off"}, "zzz": 1})"),
              StartsWith("config.json: /zzz: unknown key \"zzz\"; the keys allowed here are"));
  EXPECT_THAT(ErrorFor(R"({"limits": {"timeout": 5}})"),
              HasSubstr("/limits/timeout: unknown key \"timeout\""));
  // The twin: the correctly spelt key is accepted.
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"writable_roots": []}})"), "");
}

TEST(LoadConfig, WrongTypeNamesExpectedAndFound) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"protect_git_metadata": "yes"}})"),
            "config.json: /sandbox/protect_git_metadata: expected true or false, found \"yes\"");
  EXPECT_EQ(ErrorFor(R"({"sandbox": []})"),
            "config.json: /sandbox: expected an object, found an array");
  EXPECT_EQ(ErrorFor(R"({"command_policy": {"deny": "sudo"}})"),
            "config.json: /command_policy/deny: expected an array of strings, found \"sudo\"");
  EXPECT_EQ(ErrorFor(R"({"command_policy": {"allow": ["ok", 7]}})"),
            "config.json: /command_policy/allow/1: expected a string, found 7");
  EXPECT_EQ(ErrorFor(R"({"limits": {"timeout_seconds": "10"}})"),
            "config.json: /limits/timeout_seconds: expected a number of seconds greater than 0 "
            "and at most 86400, found \"10\"");
  EXPECT_EQ(ErrorFor(R"({"environment": {"set": {"CI": true}}})"),
            "config.json: /environment/set/CI: expected a string, found true");
  EXPECT_EQ(ErrorFor("[]"), "config.json: expected a JSON object at the top level, found an array");
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"protect_git_metadata": true}})"), "");
}

TEST(LoadConfig, BadEnumValueListsTheValidValues) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"mode": "readonly"}})"),
            "config.json: /sandbox/mode: expected one of \"off\", \"read_only\", "
            "\"workspace_write\", found \"readonly\" (did you mean \"read_only\"?)");
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"network": 0}})"),
            "config.json: /sandbox/network: expected one of \"deny\", \"allow\", \"domains\", "
            "found 0");
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"backend": "docker"}})"),
              StartsWith("config.json: /sandbox/backend: expected one of \"auto\", \"native\", "
                         "\"bwrap\", \"seatbelt\", found \"docker\""));
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"mode": "read_only", "backend": "native"}})"), "");
}

TEST(LoadConfig, InvalidRegexIsReportedWithPatternPathAndRe2Message) {
  std::string message = ErrorFor(R"({"command_policy": {"deny": ["^sudo", "rm", "x+", "a(b"]}})");
  EXPECT_THAT(message, StartsWith("config.json: /command_policy/deny/3: invalid regular "
                                  "expression \"a(b\": "));
  EXPECT_THAT(message, HasSubstr("missing )"));  // RE2's own words
  EXPECT_THAT(ErrorFor(R"({"command_policy": {"allow": ["[z-a]"]}})"),
              HasSubstr("/command_policy/allow/0: invalid regular expression \"[z-a]\": "
                        "invalid character class range"));
  EXPECT_EQ(ErrorFor(R"j({"command_policy": {"deny": ["a(b)"], "allow": ["[a-z]"]}})j"), "");
}

TEST(LoadConfig, JsonSyntaxErrorGivesFileLineAndColumn) {
  std::string message = ErrorFor("{\n  \"sandbox\": {\"mode\": \"off\",}\n}");
  EXPECT_THAT(message, StartsWith("config.json:2:29: invalid JSON: "));
  EXPECT_THAT(message, Not(HasSubstr("[json.exception")));
  EXPECT_THAT(ErrorFor(""), StartsWith("config.json:1:1: invalid JSON: "));
  EXPECT_THAT(ErrorFor("{} // comment"), StartsWith("config.json:1:4: invalid JSON"));
  EXPECT_EQ(ErrorFor("{\n  \"sandbox\": {\"mode\": \"off\"}\n}"), "");
}

TEST(LoadConfig, RepeatedKeyIsAnErrorRatherThanLastOneWins) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"mode": "read_only", "mode": "off"}})"),
            "config.json: /sandbox: key \"mode\" appears more than once in this object");
  EXPECT_EQ(ErrorFor(R"({"environment": {"set": {"A": "1"}}, "environment": {}})"),
            "config.json: key \"environment\" appears more than once in this object");
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"hidden_paths": ["/a", {"k": 1, "k": 2}]}})"),
            "config.json: /sandbox/hidden_paths/1: key \"k\" appears more than once in this "
            "object");
  EXPECT_EQ(ErrorFor(R"({"a/b": {"x": [[], {}, {"y": 0, "y": 1}]}})"),
            "config.json: /a~1b/x/2: key \"y\" appears more than once in this object");
  // The same key in two different objects is fine.
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"mode": "off"}, "environment": {"set": {"mode": "x"}}})"), "");
}

TEST(LoadConfig, LimitsAreRangeChecked) {
  EXPECT_THAT(ErrorFor(R"({"limits": {"timeout_seconds": 0}})"),
              HasSubstr("/limits/timeout_seconds: expected a number of seconds greater than 0 "
                        "and at most 86400, found 0"));
  EXPECT_THAT(ErrorFor(R"({"limits": {"timeout_seconds": -3}})"), HasSubstr("found -3"));
  EXPECT_THAT(ErrorFor(R"({"limits": {"timeout_seconds": 86401}})"), HasSubstr("found 86401"));
  EXPECT_EQ(ErrorFor(R"({"limits": {"timeout_seconds": 86400}})"), "");
  EXPECT_EQ(ErrorFor(R"({"limits": {"timeout_seconds": 0.25}})"), "");

  EXPECT_THAT(ErrorFor(R"({"limits": {"output_bytes": 1023}})"),
              HasSubstr("/limits/output_bytes: expected an integer number of bytes from 1024 to "
                        "1073741824, found 1023"));
  EXPECT_THAT(ErrorFor(R"({"limits": {"output_bytes": 2048.5}})"), HasSubstr("found 2048.5"));
  EXPECT_THAT(ErrorFor(R"({"limits": {"output_bytes": -4096}})"), HasSubstr("found -4096"));
  EXPECT_THAT(ErrorFor(R"({"limits": {"output_bytes": 1073741825}})"),
              HasSubstr("found 1073741825"));
  EXPECT_EQ(ErrorFor(R"({"limits": {"output_bytes": 1073741824}})"), "");
  EXPECT_EQ(ErrorFor(R"({"limits": {"output_bytes": 4096.0}})"), "");
}

TEST(LoadConfig, TimeoutFractionsBecomeMilliseconds) {
  Result<Config> config = ParseConfigText(R"({"limits": {"timeout_seconds": 2.5}})", "c", Env{});
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->limits.timeout, std::chrono::milliseconds(2500));
}

TEST(LoadConfig, EnvironmentNamesMustBeNames) {
  EXPECT_EQ(ErrorFor(R"({"environment": {"pass": ["PATH", "1BAD"]}})"),
            "config.json: /environment/pass/1: expected a variable name ([A-Za-z_][A-Za-z0-9_]*), "
            "found \"1BAD\"");
  EXPECT_THAT(ErrorFor(R"({"environment": {"set": {"BAD-NAME": "x"}}})"),
              StartsWith("config.json: /environment/set/BAD-NAME: expected a variable name"));
  EXPECT_THAT(ErrorFor(R"({"environment": {"set": {"A=B": "x"}}})"), HasSubstr("found \"A=B\""));
  EXPECT_EQ(ErrorFor(R"({"environment": {"pass": ["_X1"], "set": {"lower_ok": "x"}}})"), "");
}

TEST(LoadConfig, NestedAgentNamesArePlainProgramNames) {
  EXPECT_THAT(ErrorFor(R"({"command_policy": {"nested_agents": ["claude", ""]}})"),
              HasSubstr("/command_policy/nested_agents/1: expected a program name"));
  EXPECT_THAT(ErrorFor(R"({"command_policy": {"nested_agents": ["my agent"]}})"),
              HasSubstr("found \"my agent\""));
  EXPECT_EQ(ErrorFor(R"({"command_policy": {"nested_agents": ["claude", "codex"]}})"), "");
}

TEST(LoadConfig, NulCharactersInStringsAreRefused) {
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"hidden_paths": ["/a\u0000b"]}})"),
            "config.json: /sandbox/hidden_paths/0: expected a string without NUL characters, "
            "found \"/a\\u0000b\"");
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"hidden_paths": ["/ab"]}})"), "");
}

TEST(LoadConfig, QuotedValuesDoNotCarryTerminalEscapes) {
  std::string message = ErrorFor("{\"sandbox\": {\"mode\": \"\\u001b[31mred\"}}");
  EXPECT_THAT(message, HasSubstr("\\u001b[31mred"));
  EXPECT_EQ(message.find('\x1b'), std::string::npos);
}

TEST(LoadConfig, WritableRootThatDoesNotExistIsAnErrorNamingIt) {
  TempDir dir;
  std::string missing = (dir / "no-such-dir").native();
  std::string message = ErrorFor(R"({"sandbox": {"writable_roots": [")" + missing + R"("]}})");
  EXPECT_THAT(message, StartsWith("config.json: /sandbox/writable_roots/0: writable root \"" +
                                  missing + "\" does not exist"));
  EXPECT_THAT(message, HasSubstr("realpath"));
  dir.MakeDir("no-such-dir");
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"writable_roots": [")" + missing + R"("]}})"), "");
}

TEST(LoadConfig, RelativePathsAreRefused) {
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"writable_roots": ["build/cache"]}})"),
              StartsWith("config.json: /sandbox/writable_roots/0: expected an absolute path or "
                         "one starting with \"~/\", found relative path \"build/cache\""));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"hidden_paths": ["/ok", "./secrets"]}})"),
              HasSubstr("/sandbox/hidden_paths/1: expected an absolute path"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"hidden_paths": ["~bob/.ssh"]}})"),
              HasSubstr("\"~user\" is not supported"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"hidden_paths": [""]}})"),
              HasSubstr("expected a path, found an empty string"));
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"hidden_paths": ["/srv/secrets"]}})"), "");
}

TEST(LoadConfig, RootDirectoryAsWritableRootIsRefused) {
  for (std::string_view root : {"/", "/tmp/..", "//"}) {
    std::string message =
        ErrorFor(std::string(R"({"sandbox": {"writable_roots": [")") + std::string(root) + "\"]}}");
    EXPECT_THAT(message, StartsWith("config.json: /sandbox/writable_roots/0: writable root \"/\" "
                                    "is refused"))
        << root;
    EXPECT_THAT(message, HasSubstr("use mode \"off\""));
  }
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"hidden_paths": ["/"]}})"),
              HasSubstr("hidden path \"/\" is refused"));
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"writable_roots": ["/tmp"]}})"), "");
}

TEST(LoadConfig, KernelInterfacesAsWritableRootsAreRefused) {
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"writable_roots": ["/proc/sys"]}})"),
              HasSubstr("/sandbox/writable_roots/0: writable root \"/proc/sys\" is refused: "
                        "/proc is a kernel interface"));
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"writable_roots": ["/sys"]}})"),
              HasSubstr("/sys is a kernel interface"));
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"writable_roots": ["/tmp"], "hidden_paths": ["/proc/x"]}})"),
            "");
}

TEST(LoadConfig, TildeExpandsWithTheHomePassedIn) {
  TempDir home;
  std::filesystem::path cache = home.MakeDir("cache");
  Result<Config> config = ParseConfigText(
      R"({"sandbox": {"writable_roots": ["~/cache", "~"], "hidden_paths": ["~/.secret/", "~"]}})",
      "c", HomeEnv(home.path()));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->sandbox.writable_roots,
            (std::vector<std::filesystem::path>{cache, home.path()}));
  EXPECT_EQ(config->sandbox.hidden_paths,
            (std::vector<std::filesystem::path>{home / ".secret", home.path()}));
}

TEST(LoadConfig, TildeWithoutHomeIsAnError) {
  EXPECT_THAT(ErrorFor(R"({"sandbox": {"hidden_paths": ["~/.ssh"]}})", Env{}),
              HasSubstr("cannot expand \"~/.ssh\": HOME is not set to an absolute path"));
  EXPECT_EQ(ErrorFor(R"({"sandbox": {"hidden_paths": ["~/.ssh"]}})", Env{.home = "/home/u"}), "");
}

TEST(LoadConfig, WritableRootsAreNormalAndDeduplicatedByName) {
  TempDir dir;
  std::filesystem::path real = dir.MakeDir("real");
  std::filesystem::create_directory_symlink(real, dir / "link");
  std::string text = R"({"sandbox": {"writable_roots": [")" + (dir / "link").native() + R"(", ")" +
                     real.native() + R"(/", ")" + (dir / "real/../real").native() +
                     R"("], "hidden_paths": ["/a/b", "/a/./b", "/a/b/"]}})";
  Result<Config> config = ParseConfigText(text, "c", Env{});
  ASSERT_TRUE(config.has_value()) << config.error().message;
  // The link stays a name of its own: the session resolves it (and judges the link).
  EXPECT_EQ(config->sandbox.writable_roots,
            (std::vector<std::filesystem::path>{dir / "link", real}));
  EXPECT_EQ(config->sandbox.hidden_paths, std::vector<std::filesystem::path>{"/a/b"});
}

TEST(ConfigLocation, XdgConfigHomeWinsWhenAbsolute) {
  auto path = DefaultConfigPath(Env{.home = "/home/u", .xdg_config_home = "/xdg"});
  ASSERT_TRUE(path.has_value());
  EXPECT_EQ(*path, "/xdg/cordon/config.json");
}

TEST(ConfigLocation, HomeIsUsedWhenXdgIsUnsetEmptyOrRelative) {
  for (std::optional<std::string> xdg :
       {std::optional<std::string>(), std::optional<std::string>(""),
        std::optional<std::string>("relative/xdg")}) {
    auto path = DefaultConfigPath(Env{.home = "/home/u", .xdg_config_home = xdg});
    ASSERT_TRUE(path.has_value());
    EXPECT_EQ(*path, "/home/u/.config/cordon/config.json");
  }
}

TEST(ConfigLocation, NoAbsoluteHomeOrXdgIsAConfigError) {
  auto path = DefaultConfigPath(Env{.home = "relative"});
  ASSERT_FALSE(path.has_value());
  EXPECT_EQ(path.error().code, ErrorCode::kConfig);
  EXPECT_THAT(path.error().message, HasSubstr("--config"));
}

TEST(LoadUserConfig, MissingDefaultFileMeansDefaults) {
  TempDir home;
  Result<Config> config = LoadUserConfig(std::nullopt, HomeEnv(home.path()));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_TRUE(ConfigsEqual(*config, Config{}));
}

TEST(LoadUserConfig, DefaultFileIsReadWhenPresent) {
  TempDir home;
  home.Write(".config/cordon/config.json", R"({"sandbox": {"mode": "read_only"}})");
  Result<Config> config = LoadUserConfig(std::nullopt, HomeEnv(home.path()));
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->sandbox.mode, SandboxMode::kReadOnly);
}

TEST(LoadUserConfig, XdgFileIsReadAndHomeFileIgnored) {
  TempDir home;
  home.Write("xdg/cordon/config.json", R"({"sandbox": {"network": "allow"}})");
  home.Write(".config/cordon/config.json", R"({"sandbox": {"mode": "off"}})");
  Env env{.home = home.path().native(), .xdg_config_home = (home / "xdg").native()};
  Result<Config> config = LoadUserConfig(std::nullopt, env);
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->sandbox.network, NetworkPolicy::kAllow);
  EXPECT_EQ(config->sandbox.mode, SandboxMode::kWorkspaceWrite);
  // What was read is recorded, to be kept out of every command's reach (the directory: a
  // config.json made there later would be read next time).
  EXPECT_EQ(config->sandbox.own_config,
            std::vector<std::filesystem::path>{home / "xdg" / "cordon"});
}

TEST(LoadUserConfig, TheConfigReadIsRecordedAsCordonsOwnAndNeverWrittenBack) {
  TempDir dir;
  std::filesystem::path present = dir.Write("present.json", R"({"sandbox": {}})");
  Result<Config> loaded = LoadUserConfig(present, HomeEnv(dir.path()));
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->sandbox.own_config, std::vector<std::filesystem::path>{present});
  // Absent default file: its directory, all the same.
  Result<Config> defaults = LoadUserConfig(std::nullopt, HomeEnv(dir.path()));
  ASSERT_TRUE(defaults.has_value()) << defaults.error().message;
  EXPECT_EQ(defaults->sandbox.own_config,
            std::vector<std::filesystem::path>{dir / ".config" / "cordon"});
  // Not a setting: the JSON form (what `cordon sandbox` writes back) has no trace of it.
  Result<std::string> json = ToJsonChecked(*loaded);
  ASSERT_TRUE(json.has_value());
  EXPECT_THAT(*json, ::testing::Not(HasSubstr("present.json")));
}

TEST(LoadUserConfig, InvalidDefaultFileIsAnErrorNamingTheFile) {
  TempDir home;
  std::filesystem::path file =
      home.Write(".config/cordon/config.json", R"({"sandbox": {"mode": "readonly"}})");
  Result<Config> config = LoadUserConfig(std::nullopt, HomeEnv(home.path()));
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code, ErrorCode::kConfig);
  EXPECT_THAT(config.error().message, StartsWith(file.native() + ": /sandbox/mode: expected"));
}

TEST(LoadUserConfig, ExplicitPathMustExist) {
  TempDir dir;
  Result<Config> config = LoadUserConfig(dir / "missing.json", HomeEnv(dir.path()));
  ASSERT_FALSE(config.has_value());
  EXPECT_EQ(config.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(config.error().message, HasSubstr((dir / "missing.json").native()));

  std::filesystem::path present =
      dir.Write("present.json", R"({"limits": {"output_bytes": 2048}})");
  Result<Config> loaded = LoadUserConfig(present, HomeEnv(dir.path()));
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->limits.output_bytes, 2048u);
}

TEST(LoadUserConfig, ConfigThatIsNotARegularFileIsRefusedWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  Result<Config> fifo = LoadUserConfig(dir / "fifo", Env{});
  ASSERT_FALSE(fifo.has_value());
  EXPECT_THAT(fifo.error().message, HasSubstr("must be a regular file"));
  Result<Config> directory = LoadUserConfig(dir.MakeDir("d"), Env{});
  ASSERT_FALSE(directory.has_value());
  EXPECT_THAT(directory.error().message, HasSubstr("must be a regular file"));
}

TEST(LoadUserConfig, WorldWritableConfigIsRefused) {
  TempDir dir;
  std::filesystem::path path = dir.Write("config.json", "{}");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  Result<Config> open_to_all = LoadUserConfig(path, Env{});
  ASSERT_FALSE(open_to_all.has_value());
  EXPECT_EQ(open_to_all.error().message,
            path.native() +
                ": the config is writable by every user (mode 0666), so anyone could "
                "widen the sandbox; run chmod o-w on it");
  ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
  EXPECT_TRUE(LoadUserConfig(path, Env{}).has_value());
}

// A repository must not be able to widen its own sandbox: config files in the working
// directory (or above it) are never read.
TEST(LoadUserConfig, NeverReadsAConfigFromTheWorkingDirectory) {
  TempDir home;
  TempDir workspace;
  std::string widening = R"({"sandbox": {"mode": "off", "network": "allow"}})";
  workspace.Write("config.json", widening);
  workspace.Write(".cordon/config.json", widening);
  workspace.Write(".config/cordon/config.json", widening);
  workspace.Write("cordon.json", widening);
  std::filesystem::path sub = workspace.MakeDir("sub/dir");
  std::filesystem::path previous = std::filesystem::current_path();
  std::filesystem::current_path(sub);
  Result<Config> config = LoadUserConfig(std::nullopt, HomeEnv(home.path()));
  std::filesystem::current_path(previous);
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->sandbox.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(config->sandbox.network, NetworkPolicy::kDeny);
}

}  // namespace
}  // namespace cordon::config

namespace cordon::config {
namespace {

TEST(LoadConfigLimits, ResourceLimitsDefaultToNoLimit) {
  Result<Config> config = ParseConfigText("{}", "test.json", Env{.home = "/home/u"});
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->limits.memory_bytes, 0u);
  EXPECT_EQ(config->limits.processes, 0u);
  EXPECT_EQ(config->limits.open_files, 0u);
  EXPECT_EQ(config->limits.cpu_seconds, 0u);
}

TEST(LoadConfigLimits, ResourceLimitsAreReadAndRoundTrip) {
  Result<Config> config = ParseConfigText(
      R"({"limits": {"memory_bytes": 268435456, "processes": 256, "open_files": 1024,
                     "cpu_seconds": 60}})",
      "test.json", Env{.home = "/home/u"});
  ASSERT_TRUE(config.has_value()) << config.error().message;
  EXPECT_EQ(config->limits.memory_bytes, 268435456u);
  EXPECT_EQ(config->limits.processes, 256u);
  EXPECT_EQ(config->limits.open_files, 1024u);
  EXPECT_EQ(config->limits.cpu_seconds, 60u);
  Result<Config> again = ParseConfigText(ToJson(*config), "again.json", Env{.home = "/home/u"});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(ToJson(*again), ToJson(*config));
}

TEST(LoadConfigLimits, ResourceLimitsOutsideTheirRangesAreRefused) {
  auto error = [](const char* text) {
    Result<Config> config = ParseConfigText(text, "test.json", Env{.home = "/home/u"});
    return config ? std::string() : config.error().message;
  };
  EXPECT_THAT(error(R"({"limits": {"memory_bytes": 1000}})"),
              ::testing::HasSubstr("/limits/memory_bytes: expected 0 (no limit) or an integer "
                                   "number of bytes from 4194304 to 1099511627776, found 1000"));
  EXPECT_EQ(error(R"({"limits": {"memory_bytes": 4194304}})"), "");
  EXPECT_THAT(error(R"({"limits": {"processes": -1}})"), ::testing::HasSubstr("found -1"));
  EXPECT_THAT(error(R"({"limits": {"processes": 4194305}})"),
              ::testing::HasSubstr("found 4194305"));
  EXPECT_EQ(error(R"({"limits": {"processes": 1}})"), "");
  EXPECT_THAT(error(R"({"limits": {"open_files": 2}})"), ::testing::HasSubstr("found 2"));
  EXPECT_EQ(error(R"({"limits": {"open_files": 3}})"), "");
  EXPECT_THAT(error(R"({"limits": {"cpu_seconds": 1.5}})"), ::testing::HasSubstr("found 1.5"));
  EXPECT_THAT(error(R"({"limits": {"cpu_seconds": "10"}})"), ::testing::HasSubstr("found \"10\""));
  EXPECT_EQ(error(R"({"limits": {"cpu_seconds": 10}})"), "");
}

TEST(ConfigOverridesLimits, FlagsSetResourceLimitsAndAreRangeChecked) {
  Config config;
  ConfigOverrides flags;
  flags.memory_bytes = std::uint64_t{64} << 20;
  flags.processes = 64;
  ASSERT_TRUE(ApplyOverrides(config, flags, Env{.home = "/home/u"}).has_value());
  EXPECT_EQ(config.limits.memory_bytes, std::uint64_t{64} << 20);
  EXPECT_EQ(config.limits.processes, 64u);

  ConfigOverrides bad;
  bad.open_files = 1;
  Result<void> refused = ApplyOverrides(config, bad, Env{.home = "/home/u"});
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error().message, ::testing::HasSubstr("--open-files"));
}

}  // namespace
}  // namespace cordon::config
