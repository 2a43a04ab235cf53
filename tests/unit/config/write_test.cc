#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/atomic_file.h"
#include "config/load.h"
#include "config/to_json.h"
#include "config/update.h"
#include "config_matchers.h"
#include "temp_dir.h"

namespace cordon::config {
namespace {

using testing::ConfigsEqual;
using ::testing::HasSubstr;
using testing::ReadFile;
using ::testing::StartsWith;
using testing::TempDir;

mode_t ModeOf(const std::filesystem::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

// Names in `dir` other than `keep`: leftover temporary files show up here.
std::vector<std::string> OtherEntries(const std::filesystem::path& dir, std::string_view keep) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename() != keep) names.push_back(entry.path().filename());
  }
  return names;
}

Config FullConfig(const TempDir& dir) {
  Config config;
  config.sandbox.mode = SandboxMode::kReadOnly;
  config.sandbox.network = NetworkPolicy::kDomains;
  config.sandbox.allowed_domains = {"registry.example", "*.cdn.example:443", "192.0.2.7"};
  config.sandbox.denied_domains = {"[2001:db8::1]:25"};
  config.sandbox.domain_lists = {{"js", {"registry.example"}}, {"py", {"packages.example"}}};
  config.sandbox.writable_roots = {dir.MakeDir("cache"), dir.MakeDir("other")};
  config.sandbox.protect_git_metadata = false;
  config.sandbox.allow_outside_sandbox = false;
  config.sandbox.hidden_paths = {"/srv/secrets", "/home/u/.aws"};
  config.sandbox.backend = BackendChoice::kNative;
  config.command_policy.deny = {"^terraform\\s+destroy", "caf\u00e9"};
  config.command_policy.allow = {"^git "};
  config.command_policy.default_deny = false;
  config.command_policy.nested_agents = {"aider", "goose"};
  config.limits.timeout = std::chrono::milliseconds(1234);
  config.limits.output_bytes = 65536;
  config.environment.pass = {"TERM", "LANG"};
  config.environment.set = {{"CI", "1"}, {"GREETING", "hello \"world\"\n"}};
  return config;
}

TEST(ToJson, RoundTripsToAnEqualConfig) {
  TempDir dir;
  for (const Config& original : {Config{}, FullConfig(dir)}) {
    std::string text = ToJson(original);
    Result<Config> parsed = ParseConfigText(text, "round-trip", Env{});
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message << "\n" << text;
    EXPECT_TRUE(ConfigsEqual(*parsed, original));
    EXPECT_EQ(ToJson(*parsed), text);  // stable: writing twice gives the same bytes
  }
}

TEST(ToJson, WritesKeysInCanonicalOrderAndWholeSecondsAsIntegers) {
  std::string text = ToJson(Config{});
  EXPECT_THAT(text,
              StartsWith("{\n  \"sandbox\": {\n    \"mode\": \"workspace_write\",\n"
                         "    \"network\": \"deny\",\n    \"domains\": {\n      \"allow\": [],\n"
                         "      \"deny\": []\n    },\n    \"domain_lists\": {},\n"
                         "    \"parent_proxy\": \"auto\",\n"
                         "    \"parent_proxy_by_name\": false,\n"
                         "    \"writable_roots\": [],\n"));
  EXPECT_THAT(text, HasSubstr("\"timeout_seconds\": 600,"));
  EXPECT_LT(text.find("\"sandbox\""), text.find("\"command_policy\""));
  EXPECT_LT(text.find("\"command_policy\""), text.find("\"limits\""));
  EXPECT_LT(text.find("\"limits\""), text.find("\"environment\""));
  EXPECT_EQ(text.back(), '\n');
}

TEST(ToJson, WritesEnvironmentVariablesSortedByName) {
  Config config;
  config.environment.set = {{"ZED", "1"}, {"ALPHA", "2"}};
  std::string text = ToJson(config);
  EXPECT_LT(text.find("\"ALPHA\""), text.find("\"ZED\""));
  Result<Config> parsed = ParseConfigText(text, "c", Env{});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(parsed->environment.set, (std::vector<Pair>{{"ALPHA", "2"}, {"ZED", "1"}}));
}

TEST(ToJson, CheckedFormRefusesInvalidUtf8InsteadOfAlteringIt) {
  Config config;
  config.sandbox.hidden_paths = {"/bad\xff"};
  EXPECT_FALSE(ToJsonChecked(config).has_value());
  config.sandbox.hidden_paths = {"/good"};
  EXPECT_TRUE(ToJsonChecked(config).has_value());
}

TEST(WriteConfigAtomic, CreatesPrivateParentsAndAMode0600File) {
  TempDir dir;
  std::filesystem::path path = dir / "xdg/cordon/config.json";
  ::umask(022);
  ASSERT_TRUE(WriteConfigAtomic(path, Config{}).has_value());
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ModeOf(dir / "xdg"), 0700u);
  EXPECT_EQ(ModeOf(dir / "xdg/cordon"), 0700u);
  EXPECT_EQ(ReadFile(path), ToJson(Config{}));
  EXPECT_TRUE(OtherEntries(path.parent_path(), "config.json").empty());
}

TEST(WriteConfigAtomic, ReplacingAWorldReadableFileMakesIt0600) {
  TempDir dir;
  std::filesystem::path path = dir.Write("config.json", "{}");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(WriteConfigAtomic(path, FullConfig(dir)).has_value());
  EXPECT_EQ(ModeOf(path), 0600u);
  EXPECT_EQ(ReadFile(path), ToJson(FullConfig(dir)));
}

// RLIMIT_FSIZE makes write() fail with EFBIG, which no privilege bypasses, so this works when
// the tests run as root.
TEST(WriteConfigAtomic, FailedWriteLeavesTheOldFileIntactAndNoTempFile) {
  TempDir dir;
  const std::string old_content = R"({"sandbox": {"mode": "read_only"}})";
  std::filesystem::path path = dir.Write("config.json", old_content);
  const Config full = FullConfig(dir);

  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 16;
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
  Result<void> result = WriteConfigAtomic(path, full);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kSystem);
  EXPECT_THAT(result.error().message, StartsWith("write(" + dir.path().native() + "/.config.json"));
  EXPECT_EQ(ReadFile(path), old_content);
  EXPECT_THAT(OtherEntries(dir.path(), "config.json"),
              ::testing::UnorderedElementsAre("cache", "other"));
}

TEST(WriteConfigAtomic, FailedRenameLeavesTheTargetAndNoTempFile) {
  TempDir dir;
  // A non-empty directory where the file should be: rename(2) fails even for root.
  std::filesystem::path path = dir.MakeDir("config.json");
  dir.Write("config.json/keep", "x");
  Result<void> result = WriteConfigAtomic(path, Config{});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, StartsWith("rename("));
  EXPECT_THAT(result.error().message, HasSubstr(path.native()));
  EXPECT_EQ(ReadFile(dir / "config.json/keep"), "x");
  EXPECT_TRUE(OtherEntries(dir.path(), "config.json").empty());
}

TEST(WriteConfigAtomic, ParentThatIsAFileIsAnErrorNamingThePath) {
  TempDir dir;
  dir.Write("not-a-dir", "x");
  Result<void> result = WriteConfigAtomic(dir / "not-a-dir/cordon/config.json", Config{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kSystem);
  EXPECT_THAT(result.error().message, HasSubstr((dir / "not-a-dir").native()));
  EXPECT_THAT(result.error().message, HasSubstr("Not a directory"));
  EXPECT_EQ(ReadFile(dir / "not-a-dir"), "x");
}

TEST(WriteConfigAtomic, ReadOnlyDirectoryIsAnErrorForUnprivilegedUsers) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  TempDir dir;
  std::filesystem::path sub = dir.MakeDir("ro");
  std::filesystem::path path = dir.Write("ro/config.json", "{}");
  ASSERT_EQ(::chmod(sub.c_str(), 0500), 0);
  Result<void> result = WriteConfigAtomic(path, Config{});
  ::chmod(sub.c_str(), 0700);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, StartsWith("mkostemp("));
  EXPECT_EQ(ReadFile(path), "{}");
}

TEST(WriteConfigAtomic, InvalidConfigIsNotWritten) {
  TempDir dir;
  std::filesystem::path path = dir.Write("config.json", "{}");
  Config config;
  config.command_policy.deny = {"a(b"};
  Result<void> result = WriteConfigAtomic(path, config);
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("/command_policy/deny/0: invalid regular"));
  EXPECT_EQ(ReadFile(path), "{}");
}

TEST(WriteConfigAtomic, WritesThroughASymlinkedConfigFile) {
  TempDir dir;
  std::filesystem::path real = dir.Write("dotfiles/cordon.json", "{}");
  std::filesystem::path link = dir / "config.json";
  std::filesystem::create_symlink(real, link);
  ASSERT_TRUE(WriteConfigAtomic(link, Config{}).has_value());
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(ReadFile(real), ToJson(Config{}));
}

TEST(UpdateConfigFile, MissingFileStartsFromDefaults) {
  TempDir dir;
  std::filesystem::path path = dir / "cordon/config.json";
  Result<Config> written = UpdateConfigFile(path, Env{}, {"/sandbox/network", "allow"});
  ASSERT_TRUE(written.has_value()) << written.error().message;
  EXPECT_EQ(written->sandbox.network, NetworkPolicy::kAllow);
  Result<Config> reloaded = LoadConfigFile(path, Env{});
  ASSERT_TRUE(reloaded.has_value()) << reloaded.error().message;
  EXPECT_TRUE(ConfigsEqual(*reloaded, *written));
  EXPECT_EQ(reloaded->sandbox.mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(ReadFile(path), "{\n  \"sandbox\": {\n    \"network\": \"allow\"\n  }\n}\n")
      << "only what was set is written";
}

TEST(UpdateConfigFile, RemovesTempFilesOfKilledWritersButNothingElse) {
  TempDir dir;
  std::filesystem::path path = dir.Write("config.json", "{}");
  std::filesystem::path stale = dir.Write(".config.json.tmp-Ab12Cd", "{\"half");
  std::filesystem::path other = dir.Write(".other.json.tmp-Ab12Cd", "keep");  // not ours
  std::filesystem::path similar = dir.Write(".config.json.tmp-longer-name", "keep");
  ASSERT_TRUE(UpdateConfigFile(path, Env{}, {"/sandbox/mode", "read_only"}).has_value());
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(std::filesystem::exists(similar));
}

// A config copied between machines or homes (dotfiles) must keep its `~/` forms: written
// back expanded, it would hide paths that do not exist elsewhere and leave the real ones
// readable. Everything but the setting changed stays as written, in its order; the twin: the
// changed setting itself, and the config as loaded, are what they should be.
TEST(UpdateConfigFile, ChangesOnlyTheSettingAndKeepsTheRestAsWritten) {
  TempDir dir;
  std::filesystem::path cache = dir.MakeDir("cache");
  const std::string before =
      R"({"sandbox": {"writable_roots": ["~/cache/"], "hidden_paths": ["~/.vault-token"], )"
      R"("network": "deny"}, "command_policy": {"deny": ["^make install"]}})";
  std::filesystem::path path = dir.Write("config.json", before);
  for (const SettingChange& change :
       {SettingChange{"/sandbox/mode", "off"}, SettingChange{"/sandbox/network", "allow"},
        SettingChange{"/sandbox/mode", "workspace_write"}}) {
    Result<Config> written = UpdateConfigFile(path, Env{.home = dir.path().native()}, change);
    ASSERT_TRUE(written.has_value()) << written.error().message;
    EXPECT_EQ(written->sandbox.writable_roots, std::vector<std::filesystem::path>{cache});
    EXPECT_EQ(written->command_policy.deny, std::vector<std::string>{"^make install"});
  }
  const std::string after = ReadFile(path);
  EXPECT_THAT(after, HasSubstr("\"~/cache/\""));
  EXPECT_THAT(after, HasSubstr("\"~/.vault-token\""));
  EXPECT_LT(after.find("writable_roots"), after.find("hidden_paths")) << after;
  EXPECT_LT(after.find("hidden_paths"), after.find("\"network\": \"allow\"")) << after;
  EXPECT_LT(after.find("\"sandbox\""), after.find("command_policy")) << after;
  EXPECT_THAT(after, HasSubstr("\"mode\": \"workspace_write\""));
  // Loaded in another home, the entries are that home's.
  TempDir other;
  other.MakeDir("cache");
  Result<Config> elsewhere = LoadConfigFile(path, Env{.home = other.path().native()});
  ASSERT_TRUE(elsewhere.has_value()) << elsewhere.error().message;
  EXPECT_EQ(elsewhere->sandbox.hidden_paths,
            std::vector<std::filesystem::path>{other.path() / ".vault-token"});
}

TEST(UpdateConfigFile, InvalidExistingFileIsReportedAndLeftAlone) {
  TempDir dir;
  const std::string broken = R"({"sandbox": {"mode": "readonly"}})";
  std::filesystem::path path = dir.Write("config.json", broken);
  Result<Config> result = UpdateConfigFile(path, Env{}, {"/sandbox/network", "allow"});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("/sandbox/mode"));
  EXPECT_EQ(ReadFile(path), broken);
}

TEST(UpdateConfigFile, EditThatBreaksARuleIsRefusedAndTheFileKept) {
  TempDir dir;
  std::filesystem::path path = dir.Write("config.json", "{}");
  Result<Config> result =
      UpdateConfigFile(path, Env{}, {"/sandbox/writable_roots", {"relative/dir"}});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message,
              StartsWith(path.native() + " (after the change): /sandbox/writable_roots/0: "));
  EXPECT_EQ(ReadFile(path), "{}");
}

}  // namespace
}  // namespace cordon::config
