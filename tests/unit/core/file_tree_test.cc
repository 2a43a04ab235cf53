// core/file_tree.h: sizes and emptying of a tree a sandboxed command wrote (a tool cache).
#include "core/file_tree.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

namespace cordon::core {
namespace {

class FileTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/cordon-file-tree-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
    std::filesystem::create_directories(base_ / "cache/mod/pkg@v1");
    std::filesystem::create_directories(base_ / "outside");
    std::ofstream(base_ / "cache/mod/pkg@v1/a.go") << std::string(10000, 'x');
    std::ofstream(base_ / "outside/keep") << "kept\n";
    std::filesystem::create_directory_symlink(base_ / "outside", base_ / "cache/link");
    // go's module cache: read-only files in read-only directories.
    std::filesystem::permissions(base_ / "cache/mod/pkg@v1/a.go",
                                 std::filesystem::perms::owner_read);
    std::filesystem::permissions(
        base_ / "cache/mod/pkg@v1",
        std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    std::filesystem::permissions(base_ / "cache/mod", std::filesystem::perms::owner_read |
                                                          std::filesystem::perms::owner_exec);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::permissions(base_ / "cache/mod", std::filesystem::perms::owner_all, ignored);
    std::filesystem::permissions(base_ / "cache/mod/pkg@v1", std::filesystem::perms::owner_all,
                                 ignored);
    std::filesystem::remove_all(base_, ignored);
  }
  std::filesystem::path base_;
};

TEST_F(FileTreeTest, SizeCountsTheTreeWithoutFollowingALink) {
  auto size = TreeSize(base_ / "cache");
  ASSERT_TRUE(size) << size.error().message;
  EXPECT_GE(*size, 10000u);
  auto outside = TreeSize(base_ / "outside");
  ASSERT_TRUE(outside);
  // The link's target is not counted: the cache's size with the outside file grown stays.
  std::ofstream(base_ / "outside/big") << std::string(100000, 'y');
  auto again = TreeSize(base_ / "cache");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *size);
}

TEST_F(FileTreeTest, ClearEmptiesReadOnlyDirectoriesAndLeavesWhatALinkPointsTo) {
  auto freed = RemoveTreeContents(base_ / "cache");
  ASSERT_TRUE(freed) << freed.error().message;
  EXPECT_GE(*freed, 10000u);
  EXPECT_TRUE(std::filesystem::is_directory(base_ / "cache"));
  EXPECT_TRUE(std::filesystem::is_empty(base_ / "cache"));
  // The twin: the link is gone, its target is not.
  EXPECT_TRUE(std::filesystem::exists(base_ / "outside/keep"));
}

TEST_F(FileTreeTest, AMissingDirectoryIsAnErrorNamingIt) {
  auto size = RemoveTreeContents(base_ / "absent");
  ASSERT_FALSE(size);
  EXPECT_NE(size.error().message.find("absent"), std::string::npos) << size.error().message;
}

}  // namespace
}  // namespace cordon::core
