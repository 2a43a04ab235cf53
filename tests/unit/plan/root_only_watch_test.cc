// The watched copy of the root-only scan answers exactly what a fresh walk would, and walks
// again only after a change the walk could see.
#include "plan/root_only_watch.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "in_child.h"
#include "plan/host_ipc.h"
#include "private_tree.h"

#if defined(__linux__)  // inotify, user and mount namespaces
namespace cordon::plan {
namespace {

class RootOnlyWatchTest : public PrivateTreeTest {
 protected:
  void SetUp() override {
    PrivateTreeTest::SetUp();
    File("passwd", 0644);
    File("shadow", 0640);
    Dir("ssl", 0755);
    File("ssl/cert.pem", 0644);
  }

  static std::vector<std::filesystem::path> Paths(const std::vector<MountOp>& ops) {
    std::vector<std::filesystem::path> paths;
    for (const MountOp& op : ops) paths.push_back(op.path);
    return paths;
  }

  // The watched answer, checked against a fresh walk of the same tree.
  std::vector<std::filesystem::path> Watched(RootOnlyWatch& watch) {
    const std::vector<std::filesystem::path> watched = Paths(watch.Masks());
    EXPECT_EQ(watched, Paths(BuildRootOnlyMasks(root_)));
    return watched;
  }

  bool Has(const std::vector<std::filesystem::path>& paths, const std::string& name) {
    return std::find(paths.begin(), paths.end(), root_ / name) != paths.end();
  }
};

TEST_F(RootOnlyWatchTest, AnUnchangedTreeIsWalkedOnce) {
  // The watch walks again when the mount table changes, which the sandbox tests running beside
  // this one do: an attempt in which the host stayed still walks once.
  std::size_t walks = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto watch = RootOnlyWatch::Create(root_);
    ASSERT_TRUE(watch) << watch.error().message;
    EXPECT_TRUE(Has(Watched(**watch), "shadow"));
    EXPECT_TRUE(Has(Watched(**watch), "shadow"));
    EXPECT_TRUE(Has(Watched(**watch), "shadow"));
    walks = (*watch)->walks();
    if (walks == 1) break;
  }
  EXPECT_EQ(walks, 1u);
}

TEST_F(RootOnlyWatchTest, AFileMadeUnreadableToOthersIsMaskedOnTheNextPlan) {
  auto watch = RootOnlyWatch::Create(root_);
  ASSERT_TRUE(watch) << watch.error().message;
  EXPECT_FALSE(Has(Watched(**watch), "ssl/cert.pem"));
  ASSERT_EQ(::chmod((root_ / "ssl/cert.pem").c_str(), 0600), 0);  // one level down
  EXPECT_TRUE(Has(Watched(**watch), "ssl/cert.pem"));
  ASSERT_EQ(::chmod((root_ / "passwd").c_str(), 0600), 0);  // at the top
  EXPECT_TRUE(Has(Watched(**watch), "passwd"));
  EXPECT_EQ((*watch)->walks(), 3u);
}

TEST_F(RootOnlyWatchTest, NewRenamedAndRemovedEntriesAreSeen) {
  auto watch = RootOnlyWatch::Create(root_);
  ASSERT_TRUE(watch) << watch.error().message;
  (void)Watched(**watch);
  File("ssl/new.key", 0600);  // created inside a watched subdirectory
  EXPECT_TRUE(Has(Watched(**watch), "ssl/new.key"));
  Dir("later", 0755);  // a subdirectory created after the watch: watched from the next walk
  (void)Watched(**watch);
  File("later/secret", 0600);
  EXPECT_TRUE(Has(Watched(**watch), "later/secret"));
  ASSERT_EQ(::rename((root_ / "later/secret").c_str(), (root_ / "ssl/moved").c_str()), 0);
  const auto after_rename = Watched(**watch);
  EXPECT_TRUE(Has(after_rename, "ssl/moved"));
  EXPECT_FALSE(Has(after_rename, "later/secret"));
  ASSERT_EQ(::unlink((root_ / "shadow").c_str()), 0);
  EXPECT_FALSE(Has(Watched(**watch), "shadow"));
}

TEST_F(RootOnlyWatchTest, AChangeBelowTheScannedDepthCausesNoWalk) {
  Dir("ssl/private", 0700);  // masked as a whole: what lies inside is never looked at
  auto watch = RootOnlyWatch::Create(root_);
  ASSERT_TRUE(watch) << watch.error().message;
  EXPECT_TRUE(Has(Watched(**watch), "ssl/private"));
  File("ssl/private/key.pem", 0600);
  EXPECT_TRUE(Has(Watched(**watch), "ssl/private"));
  EXPECT_FALSE(Has(Watched(**watch), "ssl/private/key.pem"));
  EXPECT_EQ((*watch)->walks(), 1u);
}

// A bind mount over an entry changes what its path names without any inotify event: the mount
// table's change forces the walk. In a child with its own user and mount namespaces (no
// privilege needed, nothing of the test process's view changes).
TEST_F(RootOnlyWatchTest, AMountOverAnEntryIsSeen) {
  File("private-copy", 0600);
  const int code = ExitCodeInChild([&] {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return kChildSkipped;
    auto watch = RootOnlyWatch::Create(root_);
    if (!watch) return 10;
    const auto before = Paths((*watch)->Masks());
    if (Has(before, "passwd")) return 11;
    // passwd (0644) now names the 0600 file: "others" cannot read it any more.
    if (::mount((root_ / "private-copy").c_str(), (root_ / "passwd").c_str(), nullptr, MS_BIND,
                nullptr) != 0) {
      return kChildSkipped;
    }
    const auto after = Paths((*watch)->Masks());
    return Has(after, "passwd") && (*watch)->walks() == 2 ? 0 : 12;
  });
  if (code == kChildSkipped) GTEST_SKIP() << "no user or mount namespace for the test";
  EXPECT_EQ(code, 0) << "10: no watch, 11: masked before, 12: mount not seen";
}

TEST_F(RootOnlyWatchTest, AMissingTreeCannotBeWatched) {
  EXPECT_FALSE(RootOnlyWatch::Create(root_ / "absent"));
}

}  // namespace
}  // namespace cordon::plan
#endif
