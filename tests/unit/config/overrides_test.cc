#include "config/overrides.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_matchers.h"
#include "temp_dir.h"

namespace cordon::config {
namespace {

using testing::ConfigsEqual;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;

TEST(ApplyOverrides, FlagsReplaceScalarSettings) {
  Config config;
  ConfigOverrides flags;
  flags.mode = SandboxMode::kReadOnly;
  flags.network = NetworkPolicy::kAllow;
  flags.backend = BackendChoice::kBwrap;
  flags.timeout = std::chrono::seconds(30);
  flags.output_bytes = 4096;
  flags.protect_git_metadata = false;
  flags.allow_outside_sandbox = false;
  ASSERT_TRUE(ApplyOverrides(config, flags, Env{}).has_value());
  EXPECT_EQ(config.sandbox.mode, SandboxMode::kReadOnly);
  EXPECT_EQ(config.sandbox.network, NetworkPolicy::kAllow);
  EXPECT_EQ(config.sandbox.backend, BackendChoice::kBwrap);
  EXPECT_EQ(config.limits.timeout, std::chrono::seconds(30));
  EXPECT_EQ(config.limits.output_bytes, 4096u);
  EXPECT_FALSE(config.sandbox.protect_git_metadata);
  EXPECT_FALSE(config.sandbox.allow_outside_sandbox);
}

TEST(ApplyOverrides, NoFlagsChangeNothing) {
  Config config;
  config.sandbox.mode = SandboxMode::kOff;
  Config before = config;
  ASSERT_TRUE(ApplyOverrides(config, ConfigOverrides{}, Env{}).has_value());
  EXPECT_TRUE(ConfigsEqual(config, before));
}

TEST(ApplyOverrides, WritableRootsAreAddedNormalAndDeduplicated) {
  TempDir dir;
  std::filesystem::path a = dir.MakeDir("a");
  std::filesystem::path b = dir.MakeDir("b");
  std::filesystem::create_directory_symlink(b, dir / "b-link");
  Config config;
  config.sandbox.writable_roots = {a};
  ConfigOverrides flags;
  flags.writable_roots = {(dir / "b-link").native(), a.native() + "/", "~/b"};
  ASSERT_TRUE(ApplyOverrides(config, flags, Env{.home = dir.path().native()}).has_value());
  EXPECT_EQ(config.sandbox.writable_roots,
            (std::vector<std::filesystem::path>{a, dir / "b-link", b}));
}

TEST(ApplyOverrides, RelativeRootResolvesAgainstTheWorkingDirectoryOnlyWhenGiven) {
  TempDir dir;
  std::filesystem::path cache = dir.MakeDir("cache");
  ConfigOverrides flags;
  flags.writable_roots = {"cache"};
  Config without;
  auto refused = ApplyOverrides(without, flags, Env{});
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error().message,
              StartsWith("command line: --writable-root \"cache\": expected an absolute path"));

  flags.working_directory = dir.path();
  Config with;
  ASSERT_TRUE(ApplyOverrides(with, flags, Env{}).has_value());
  EXPECT_EQ(with.sandbox.writable_roots, std::vector<std::filesystem::path>{cache});
}

TEST(ApplyOverrides, MissingRootIsAnErrorAndLeavesTheConfigUnchanged) {
  TempDir dir;
  Config config;
  config.sandbox.mode = SandboxMode::kReadOnly;
  ConfigOverrides flags;
  flags.mode = SandboxMode::kOff;
  flags.writable_roots = {(dir / "missing").native()};
  auto result = ApplyOverrides(config, flags, Env{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kConfig);
  EXPECT_THAT(result.error().message, HasSubstr("does not exist"));
  EXPECT_THAT(result.error().message, HasSubstr((dir / "missing").native()));
  EXPECT_EQ(config.sandbox.mode, SandboxMode::kReadOnly);
}

TEST(ApplyOverrides, RootDirectoryIsRefusedOnTheCommandLineToo) {
  Config config;
  ConfigOverrides flags;
  flags.writable_roots = {"/"};
  auto result = ApplyOverrides(config, flags, Env{});
  ASSERT_FALSE(result.has_value());
  EXPECT_THAT(result.error().message, HasSubstr("writable root \"/\" is refused"));
  flags.writable_roots = {"/tmp"};
  EXPECT_TRUE(ApplyOverrides(config, flags, Env{}).has_value());
}

TEST(ApplyOverrides, LimitsAreRangeChecked) {
  Config config;
  ConfigOverrides flags;
  flags.timeout = std::chrono::milliseconds(0);
  EXPECT_THAT(ApplyOverrides(config, flags, Env{}).error().message,
              StartsWith("command line: --timeout: expected"));
  flags.timeout = std::chrono::hours(25);
  EXPECT_FALSE(ApplyOverrides(config, flags, Env{}).has_value());
  flags.timeout = std::chrono::hours(24);
  EXPECT_TRUE(ApplyOverrides(config, flags, Env{}).has_value());
  flags.output_bytes = 10;
  EXPECT_THAT(ApplyOverrides(config, flags, Env{}).error().message, HasSubstr("--output-bytes"));
}

TEST(ApplyOverrides, HiddenPathsAreAddedAbsolute) {
  Config config;
  ConfigOverrides flags;
  flags.hidden_paths = {"~/.aws", "/srv/keys/"};
  ASSERT_TRUE(ApplyOverrides(config, flags, Env{.home = "/home/u"}).has_value());
  EXPECT_EQ(config.sandbox.hidden_paths,
            (std::vector<std::filesystem::path>{"/home/u/.aws", "/srv/keys"}));
  flags.hidden_paths = {"keys"};
  EXPECT_FALSE(ApplyOverrides(config, flags, Env{}).has_value());
}

// --home and --readable: the view is set, grants are added absolute; "/" and the home itself
// are refused (either would undo the hidden home), as are relative paths without a directory.
TEST(ApplyOverrides, HomeViewAndReadablePathsFromFlags) {
  Config config;
  ConfigOverrides flags;
  flags.home = HomeView::kHidden;
  flags.readable_paths = {"~/notes", "/srv/docs/"};
  ASSERT_TRUE(ApplyOverrides(config, flags, Env{.home = "/home/u"}).has_value());
  EXPECT_EQ(config.sandbox.home, HomeView::kHidden);
  EXPECT_EQ(config.sandbox.readable_paths,
            (std::vector<std::filesystem::path>{"/home/u/notes", "/srv/docs"}));
  for (const char* refused : {"/", "~", "~/", "notes"}) {
    Config untouched;
    ConfigOverrides bad;
    bad.readable_paths = {refused};
    Result<void> result = ApplyOverrides(untouched, bad, Env{.home = "/home/u"});
    EXPECT_FALSE(result.has_value()) << refused;
    EXPECT_TRUE(untouched.sandbox.readable_paths.empty()) << refused;
  }
}

}  // namespace
}  // namespace cordon::config
