#include "core/paths.h"

#include <gtest/gtest.h>

namespace cordon::core {
namespace {

TEST(Paths, CanonicalResolvesDotDotAndSymlinks) {
  auto root = Canonical("/");
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(*root, "/");
  auto etc = Canonical("/etc/../etc/.");
  ASSERT_TRUE(etc.has_value());
  EXPECT_EQ(*etc, "/etc");
}

TEST(Paths, CanonicalOfMissingPathIsNotFoundAndNamesThePath) {
  auto missing = Canonical("/definitely/not/here");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find("/definitely/not/here"), std::string::npos);
  EXPECT_NE(missing.error().message.find("realpath"), std::string::npos);
}

TEST(Paths, ExpandHomeOnlyTouchesLeadingTilde) {
  EXPECT_EQ(ExpandHome("~", "/home/u"), "/home/u");
  EXPECT_EQ(ExpandHome("~/x/y", "/home/u"), "/home/u/x/y");
  EXPECT_EQ(ExpandHome("/a/~/b", "/home/u"), "/a/~/b");
  EXPECT_EQ(ExpandHome("~other", "/home/u"), "~other");
}

TEST(Paths, IsWithinRespectsComponentBoundaries) {
  EXPECT_TRUE(IsWithin("/work/a", "/work"));
  EXPECT_TRUE(IsWithin("/work", "/work"));
  EXPECT_FALSE(IsWithin("/workshop", "/work"));
  EXPECT_FALSE(IsWithin("/", "/work"));
  EXPECT_TRUE(IsWithin("/anything", "/"));
}

}  // namespace
}  // namespace cordon::core
