// core/tree_copy.h: filling a tool cache (written by sandboxed commands) from a host cache,
// never through a link on either side and never replacing what is there.
#include "core/tree_copy.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace cordon::core {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class TreeCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/tmp/cordon-tree-copy-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
    host_ = base_ / "host";
    cache_ = base_ / "cache";
    fs::create_directories(host_ / "content/ab");
    fs::create_directories(host_ / "mod/pkg@v1");
    fs::create_directories(cache_);
    fs::create_directories(base_ / "outside");
    std::ofstream(host_ / "content/ab/cd") << std::string(100000, 'x');
    std::ofstream(host_ / "index") << "host index\n";
    std::ofstream(host_ / "mod/pkg@v1/a.go") << "package a\n";
    std::ofstream(base_ / "outside/secret") << "secret\n";
    // go's module cache: read-only files in read-only directories.
    fs::permissions(host_ / "mod/pkg@v1/a.go", fs::perms::owner_read | fs::perms::group_read);
    fs::permissions(host_ / "mod/pkg@v1", fs::perms::owner_read | fs::perms::owner_exec);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(host_ / "mod/pkg@v1", fs::perms::owner_all, ignored);
    fs::remove_all(base_, ignored);
  }
  fs::path base_, host_, cache_;
};

TEST_F(TreeCopyTest, CopiesFilesAndDirectoriesWithTheOwnersPermissions) {
  Result<CopyCounts> copied = CopyMissing(host_, cache_, "npm/_cacache");
  ASSERT_TRUE(copied) << copied.error().message;
  EXPECT_EQ(copied->files, 3u);
  EXPECT_EQ(copied->bytes, 100000u + 11 + 10);
  EXPECT_EQ(copied->kept, 0u);
  EXPECT_EQ(copied->skipped, 0u);
  const fs::path into = cache_ / "npm/_cacache";
  EXPECT_EQ(Read(into / "content/ab/cd"), std::string(100000, 'x'));
  EXPECT_EQ(Read(into / "mod/pkg@v1/a.go"), "package a\n");
  // Only the owner's bits: a read-only file stays read-only; directories made are 0700.
  struct stat st {};
  ASSERT_EQ(::stat((into / "mod/pkg@v1/a.go").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  ASSERT_EQ(::stat((into / "mod/pkg@v1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // No temporary name is left behind.
  for (const auto& entry : fs::recursive_directory_iterator(cache_)) {
    EXPECT_EQ(entry.path().filename().string().find(".cordon-seed"), std::string::npos)
        << entry.path();
  }
}

// What the cache has is never replaced (a command may have written a newer entry), and a
// second seed copies nothing.
TEST_F(TreeCopyTest, KeepsWhatTheCacheHasAndCopiesOnlyWhatIsMissing) {
  fs::create_directories(cache_ / "c");
  std::ofstream(cache_ / "c/index") << "cache's own\n";
  Result<CopyCounts> first = CopyMissing(host_, cache_, "c");
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->files, 2u);
  EXPECT_EQ(first->kept, 1u);
  EXPECT_EQ(Read(cache_ / "c/index"), "cache's own\n");
  Result<CopyCounts> again = CopyMissing(host_, cache_, "c");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->files, 0u);
  EXPECT_EQ(again->kept, 3u);
}

// A link a sandboxed command left in the cache leads nowhere: not as a directory on the way
// (its target stays unwritten), not as a file name (the link stays, its target unread and
// unwritten), not as the destination's own path.
TEST_F(TreeCopyTest, NeverWritesThroughALinkInTheCache) {
  fs::create_directories(cache_ / "c");
  fs::create_directory_symlink(base_ / "outside", cache_ / "c/content");
  fs::create_symlink(base_ / "outside/secret", cache_ / "c/index");
  fs::create_directory_symlink(base_ / "outside", cache_ / "linked");
  Result<CopyCounts> copied = CopyMissing(host_, cache_, "c");
  ASSERT_TRUE(copied) << copied.error().message;
  EXPECT_EQ(copied->files, 1u);    // mod/pkg@v1/a.go
  EXPECT_EQ(copied->kept, 1u);     // the link named index, left as it is
  EXPECT_EQ(copied->skipped, 1u);  // content: a link where a directory is needed
  EXPECT_EQ(Read(base_ / "outside/secret"), "secret\n");
  EXPECT_FALSE(fs::exists(base_ / "outside/ab"));
  EXPECT_TRUE(fs::is_symlink(cache_ / "c/index"));
  // The destination's own path through a link is refused.
  EXPECT_FALSE(CopyMissing(host_, cache_, "linked/npm"));
  EXPECT_FALSE(fs::exists(base_ / "outside/npm"));
}

// The source's links and special files are left out: the copy never reaches beyond the tree.
TEST_F(TreeCopyTest, LeavesOutTheSourcesLinksAndSpecialFiles) {
  fs::create_symlink(base_ / "outside/secret", host_ / "content/ab/link");
  fs::create_directory_symlink(base_ / "outside", host_ / "dirlink");
  ASSERT_EQ(::mkfifo((host_ / "fifo").c_str(), 0600), 0);
  Result<CopyCounts> copied = CopyMissing(host_, cache_, "c");
  ASSERT_TRUE(copied) << copied.error().message;
  EXPECT_EQ(copied->files, 3u);
  EXPECT_EQ(copied->skipped, 3u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache_ / "c/content/ab/link")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache_ / "c/dirlink")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache_ / "c/fifo")));
}

// The source's own path is followed through no link: a tool's variable may name a directory
// in a project, where a sandboxed command could have linked a secret in (`ln -s ~/.ssh
// .npm/_cacache`). Refused, and nothing is copied or made.
TEST_F(TreeCopyTest, ASourceReachedThroughALinkIsRefused) {
  fs::create_directory_symlink(base_ / "outside", host_ / "linked");
  fs::create_directory_symlink(host_, base_ / "alias");
  for (const fs::path& source : {host_ / "linked", base_ / "alias/content"}) {
    Result<CopyCounts> copied = CopyMissing(source, cache_, "c");
    ASSERT_FALSE(copied) << source;
    EXPECT_NE(copied.error().message.find(source.string()), std::string::npos)
        << copied.error().message;
    EXPECT_FALSE(fs::exists(cache_ / "c")) << source;
  }
}

// A host without the cache copies nothing; a destination that escapes with ".." is refused.
TEST_F(TreeCopyTest, AMissingSourceCopiesNothingAndDotDotIsRefused) {
  Result<CopyCounts> none = CopyMissing(base_ / "no-such-cache", cache_, "c");
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->files, 0u);
  EXPECT_FALSE(fs::exists(cache_ / "c"));
  Result<CopyCounts> escaping = CopyMissing(host_, cache_, "../outside");
  ASSERT_FALSE(escaping);
  EXPECT_NE(escaping.error().message.find(".."), std::string::npos) << escaping.error().message;
  EXPECT_FALSE(fs::exists(base_ / "outside/index"));
}

// A directory of the cache its owner keeps read-only (go's extracted modules) is left as it
// is, not opened up: what is missing in it is counted as left out (as root, which may write
// it anyway, it is filled).
TEST_F(TreeCopyTest, AReadOnlyDirectoryOfTheCacheIsNotOpenedUp) {
  fs::create_directories(cache_ / "c/mod/pkg@v1");
  fs::permissions(cache_ / "c/mod/pkg@v1", fs::perms::owner_read | fs::perms::owner_exec);
  Result<CopyCounts> copied = CopyMissing(host_, cache_, "c");
  struct stat st {};
  ASSERT_EQ(::stat((cache_ / "c/mod/pkg@v1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0500u);
  fs::permissions(cache_ / "c/mod/pkg@v1", fs::perms::owner_all);
  ASSERT_TRUE(copied) << copied.error().message;
  if (::geteuid() == 0) {
    EXPECT_EQ(copied->files, 3u);
  } else {
    EXPECT_EQ(copied->files, 2u);
    EXPECT_EQ(copied->skipped, 1u);
    EXPECT_FALSE(fs::exists(cache_ / "c/mod/pkg@v1/a.go"));
  }
}

}  // namespace
}  // namespace cordon::core
