#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/resolve_paths.h"
#include "temp_dir.h"

namespace cordon::config {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

TEST(ExpandUserPath, ExpandsTildeAndNormalises) {
  Env env{.home = "/home/u"};
  EXPECT_EQ(*ExpandUserPath("~", env), "/home/u");
  EXPECT_EQ(*ExpandUserPath("~/", env), "/home/u");
  EXPECT_EQ(*ExpandUserPath("~/a/../b/", env), "/home/u/b");
  EXPECT_EQ(*ExpandUserPath("/x/./y//z/", env), "/x/y/z");
  EXPECT_EQ(*ExpandUserPath("/", env), "/");
}

TEST(ExpandUserPath, RefusesRelativeAndOtherUsersHomes) {
  Env env{.home = "/home/u"};
  EXPECT_THAT(ExpandUserPath("a/b", env).error().message, HasSubstr("relative path \"a/b\""));
  EXPECT_THAT(ExpandUserPath("~u/x", env).error().message, HasSubstr("\"~user\" is not supported"));
  EXPECT_THAT(ExpandUserPath("~/x", Env{.home = "rel"}).error().message,
              HasSubstr("HOME is not set to an absolute path"));
}

// The session resolves the name when it starts, and judges the links on the way there
// (session/planted_links.h): the configuration keeps the name as written.
TEST(ResolveWritableRoot, KeepsALinkAsNamedForTheSessionToJudge) {
  TempDir dir;
  std::filesystem::path real = dir.MakeDir("real");
  std::filesystem::create_directory_symlink(real, dir / "link");
  auto resolved = ResolveWritableRoot((dir / "link").native() + "/", Env{});
  ASSERT_TRUE(resolved.has_value()) << resolved.error().message;
  EXPECT_EQ(*resolved, dir / "link");
  // The twin: a link to nowhere is refused here already.
  std::filesystem::create_directory_symlink(dir / "missing", dir / "dangling");
  EXPECT_FALSE(ResolveWritableRoot((dir / "dangling").native(), Env{}).has_value());
}

TEST(ResolveWritableRoot, SymlinkToRootIsRefusedLikeRootItself) {
  TempDir dir;
  std::filesystem::create_directory_symlink("/", dir / "to-root");
  auto resolved = ResolveWritableRoot((dir / "to-root").native(), Env{});
  ASSERT_FALSE(resolved.has_value());
  EXPECT_THAT(resolved.error().message, HasSubstr("writable root \"/\" is refused"));
}

TEST(NormalisePaths, IsIdempotent) {
  TempDir dir;
  Config config;
  config.sandbox.writable_roots = {dir.MakeDir("a"), dir.path()};
  config.sandbox.hidden_paths = {"/x/y"};
  ASSERT_TRUE(NormalisePaths(config, Env{}, "c").has_value());
  Config again = config;
  ASSERT_TRUE(NormalisePaths(again, Env{}, "c").has_value());
  EXPECT_EQ(again.sandbox.writable_roots, config.sandbox.writable_roots);
  EXPECT_EQ(again.sandbox.hidden_paths, config.sandbox.hidden_paths);
}

}  // namespace
}  // namespace cordon::config
