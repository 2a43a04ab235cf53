// sandbox.tool_caches (decision 0041), judged from outside: what a command writes into its
// tools' cache is on the host for the next command (one-shot, served, MCP; native and
// bubblewrap), and the cache is the only place the setting makes writable — never the host's
// own caches, never the directory that holds cordon's caches, never another workspace's cache.
//
// The caller's home lies outside /tmp and /var/tmp (the sandbox replaces both: a cache or a
// planted host cache there would judge nothing): in $CORDON_ESCAPE_BASE
// (scripts/run_unprivileged.sh gives the test user one), else in /var/lib.
#include <fmt/format.h>
#include <stdlib.h>

#include <fstream>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

class ToolCachesTest : public KernelTest {
 protected:
  void SetUp() override {
    KernelTest::SetUp();
    const char* base = ::getenv("CORDON_ESCAPE_BASE");
    std::string pattern = fmt::format("{}/cordon-tool-caches-XXXXXX",
                                      base != nullptr && base[0] == '/' ? base : "/var/lib");
    if (::mkdtemp(pattern.data()) == nullptr) GTEST_SKIP() << "cannot make " << pattern;
    test_home_ = pattern;
    for (const char* dir : {"proj", "other", ".npm", ".cache/go-build"}) {
      std::filesystem::create_directories(test_home_ / dir);
    }
    ::setenv("HOME", test_home_.c_str(), 1);
    ::unsetenv("XDG_CACHE_HOME");
  }
  void TearDown() override {
    std::error_code ignored;
    if (!test_home_.empty()) {
      // go marks its caches read-only; the test's commands write only plain files.
      std::filesystem::remove_all(test_home_, ignored);
    }
    KernelTest::TearDown();  // restores HOME
  }

  Config CacheConfig(ToolCaches setting) const {
    Config config = MakeConfig();
    config.sandbox.tool_caches = setting;
    return config;
  }

  std::filesystem::path Shared() const { return test_home_ / ".cache/cordon/tool-caches/shared"; }

  std::filesystem::path test_home_;
};

TEST_F(ToolCachesTest, WhatOneCommandCachesTheNextOneFinds) {
  auto session = SessionOrSkip(CacheConfig(ToolCaches::kShared), test_home_ / "proj");
  if (!session) return;
  const RunResult write =
      Shell(*session,
            "mkdir -p \"$npm_config_cache\" \"$GOCACHE\" && echo warm > "
            "\"$npm_config_cache/entry\" && echo built > \"$GOCACHE/object\" && echo written");
  EXPECT_EQ(write.stdout_data.data, "written\n") << Describe(write);
  // On the host, in cordon's own cache: the command is gone, the cache is not.
  EXPECT_EQ(ReadFile(Shared() / "npm/entry"), "warm\n");
  EXPECT_EQ(ReadFile(Shared() / "go-build/object"), "built\n");
  const RunResult read = Shell(*session, "cat \"$npm_config_cache/entry\" \"$GOCACHE/object\"");
  EXPECT_EQ(read.stdout_data.data, "warm\nbuilt\n") << Describe(read);
  // A new session (a new agent, a new one-shot) finds it too.
  auto later = SessionOrSkip(CacheConfig(ToolCaches::kShared), test_home_ / "other");
  if (!later) return;
  const RunResult again = Shell(*later, "cat \"$npm_config_cache/entry\"");
  EXPECT_EQ(again.stdout_data.data, "warm\n") << Describe(again);
}

// The denied twin: the setting adds the cache and nothing else. The host's own caches (the
// tools' defaults in the real home), the directory above cordon's cache (its other scopes) and
// cordon's cache under another name stay unwritable.
TEST_F(ToolCachesTest, TheCacheIsTheOnlyPlaceTheSettingMakesWritable) {
  auto session = SessionOrSkip(CacheConfig(ToolCaches::kShared), test_home_ / "proj");
  if (!session) return;
  const std::string h = test_home_.string();
  const RunResult result = Shell(
      *session, fmt::format("for f in {0}/.npm/planted {0}/.cache/go-build/planted "
                            "{0}/.cache/cordon/tool-caches/planted {0}/.cache/cordon/planted "
                            "\"$npm_config_cache/../../planted\"; do "
                            "echo x > \"$f\" 2>/dev/null && echo \"wrote $f\"; done; echo done",
                            h));
  EXPECT_EQ(result.stdout_data.data, "done\n") << Describe(result);
  for (const char* planted : {".npm/planted", ".cache/go-build/planted",
                              ".cache/cordon/tool-caches/planted", ".cache/cordon/planted"}) {
    EXPECT_FALSE(std::filesystem::exists(test_home_ / planted)) << planted;
  }
}

// Off: the tools are not pointed anywhere, nothing is made on the host, and what a command
// caches (in its private HOME) is gone for the next one.
TEST_F(ToolCachesTest, OffKeepsNothingBetweenCommands) {
  auto session = SessionOrSkip(CacheConfig(ToolCaches::kOff), test_home_ / "proj");
  if (!session) return;
  const RunResult first = Shell(*session,
                                "echo \"${npm_config_cache:-unset}\"; mkdir -p ~/.npm && "
                                "echo warm > ~/.npm/entry && cat ~/.npm/entry");
  EXPECT_EQ(first.stdout_data.data, "unset\nwarm\n") << Describe(first);
  const RunResult second = Shell(*session, "cat ~/.npm/entry 2>/dev/null || echo cold");
  EXPECT_EQ(second.stdout_data.data, "cold\n") << Describe(second);
  EXPECT_FALSE(std::filesystem::exists(test_home_ / ".cache/cordon"));
}

// One cache per workspace: another workspace's commands neither find nor write it.
TEST_F(ToolCachesTest, AWorkspacesOwnCacheIsOutOfTheOtherWorkspacesReach) {
  auto mine = SessionOrSkip(CacheConfig(ToolCaches::kWorkspace), test_home_ / "proj");
  if (!mine) return;
  const RunResult write =
      Shell(*mine,
            "mkdir -p \"$PIP_CACHE_DIR\" && echo mine > \"$PIP_CACHE_DIR/wheel\" && "
            "echo \"$PIP_CACHE_DIR\"");
  ASSERT_EQ(write.status, RunStatus::kExited) << Describe(write);
  const std::string own = write.stdout_data.data.substr(0, write.stdout_data.data.size() - 1);
  ASSERT_TRUE(own.starts_with((test_home_ / ".cache/cordon/tool-caches/workspaces/").string()))
      << own;
  EXPECT_EQ(ReadFile(std::filesystem::path(own) / "wheel"), "mine\n");
  EXPECT_EQ(ReadFile(std::filesystem::path(own).parent_path().parent_path() / "workspace"),
            (test_home_ / "proj").string() + "\n");

  auto theirs = SessionOrSkip(CacheConfig(ToolCaches::kWorkspace), test_home_ / "other");
  if (!theirs) return;
  const RunResult other =
      Shell(*theirs, fmt::format("cat \"$PIP_CACHE_DIR/wheel\" 2>/dev/null || echo cold; "
                                 "echo theirs > {0}/wheel 2>/dev/null && echo wrote; "
                                 "echo x > {0}/planted 2>/dev/null && echo planted; true",
                                 own));
  EXPECT_EQ(other.stdout_data.data, "cold\n") << Describe(other);
  EXPECT_EQ(ReadFile(std::filesystem::path(own) / "wheel"), "mine\n");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(own) / "planted"));
}

// read_only mode writes nowhere that lasts: no cache either.
TEST_F(ToolCachesTest, ReadOnlyModeKeepsNoCache) {
  Config config = CacheConfig(ToolCaches::kShared);
  config.sandbox.mode = SandboxMode::kReadOnly;
  auto session = SessionOrSkip(config, test_home_ / "proj");
  if (!session) return;
  const RunResult result = Shell(*session, "echo \"${npm_config_cache:-unset}\"");
  EXPECT_EQ(result.stdout_data.data, "unset\n") << Describe(result);
  EXPECT_FALSE(std::filesystem::exists(test_home_ / ".cache/cordon"));
}

}  // namespace
}  // namespace cordon::kernel_test
