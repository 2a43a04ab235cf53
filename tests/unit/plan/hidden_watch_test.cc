// The watched hidden-path view answers exactly what a fresh scan would, and scans again only
// after a change a scan could see (decision 0022's contract, plan/hidden_watch.h).
#include "plan/hidden_watch.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "in_child.h"

#if defined(__linux__)  // inotify, user and mount namespaces
namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// A user namespace in which this process is root (files it creates keep its real owner) and a
// mount namespace of its own. In a forked child only.
bool EnterOwnNamespaces() {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
  auto write = [](const char* path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    out.flush();
    return static_cast<bool>(out);
  };
  return write("/proc/self/setgroups", "deny") &&
         write("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") &&
         write("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
}

class HiddenWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cordon-hidden-watch-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    home_ = fs::canonical(dir);
    fs::create_directories(home_ / "project");
  }
  void TearDown() override { fs::remove_all(home_); }

  static std::vector<fs::path> Paths(const std::vector<HiddenTarget>& targets) {
    std::vector<fs::path> paths;
    for (const HiddenTarget& t : targets) paths.push_back(t.path);
    return paths;
  }

  // The watched answer, checked against a fresh scan of the same host (within the test's home:
  // the entries of / and /tmp, also granted, change as other processes come and go).
  HiddenView View() {
    HiddenView watched = cache_.View(config_, {home_}, AllowList::kPresentAndAbsent);
    const HiddenView fresh = BuildHiddenView(config_, {home_}, AllowList::kPresentAndAbsent);
    EXPECT_EQ(Paths(watched.scan.present), Paths(fresh.scan.present));
    EXPECT_EQ(Paths(watched.scan.absent), Paths(fresh.scan.absent));
    EXPECT_EQ(InHome(watched.readable), InHome(fresh.readable));
    return watched;
  }

  std::vector<fs::path> InHome(const std::vector<fs::path>& paths) const {
    std::vector<fs::path> kept;
    for (const fs::path& p : paths) {
      if (p.native().starts_with(home_.native() + "/")) kept.push_back(p);
    }
    return kept;
  }

  static bool Has(const std::vector<fs::path>& paths, const fs::path& p) {
    return std::find(paths.begin(), paths.end(), p) != paths.end();
  }

  SandboxConfig config_;
  fs::path home_;
  HiddenViewCache cache_;  // a long-lived session's
};

// The home's ancestors are listed, hence watched: other processes creating files in the host's
// /tmp would cause (correct) rescans. So a child with its own user and mount namespaces and a
// /tmp of its own checks that an unchanged host is not scanned again.
TEST_F(HiddenWatchTest, AnUnchangedHostIsScannedOnce) {
  const int code = ExitCodeInChild([&] {
    if (!EnterOwnNamespaces()) return kChildSkipped;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", "/tmp", "tmpfs", 0, nullptr) != 0) {
      return kChildSkipped;
    }
    const fs::path home = "/tmp/home";
    fs::create_directories(home / ".ssh");
    HiddenViewCache cache;
    auto present = [&] {
      return Paths(cache.View(config_, {home}, AllowList::kPresentAndAbsent).scan.present);
    };
    if (!Has(present(), home / ".ssh")) return 10;
    const std::uint64_t scans = cache.scans();
    if (scans == 0) return 11;
    for (int i = 0; i < 3; ++i) {
      if (!Has(present(), home / ".ssh")) return 10;
    }
    return cache.scans() == scans ? 0 : 12;
  });
  if (code == kChildSkipped) GTEST_SKIP() << "no user or mount namespace for the test";
  EXPECT_EQ(code, 0)
      << "10: .ssh not found, 11: no scan at all, 12: scanned again though nothing changed";
}

TEST_F(HiddenWatchTest, ASecretCreatedOrRemovedIsSeenByTheNextPlan) {
  EXPECT_TRUE(Has(Paths(View().scan.absent), home_ / ".aws"));
  fs::create_directory(home_ / ".aws");  // in the home
  EXPECT_TRUE(Has(Paths(View().scan.present), home_ / ".aws"));
  fs::create_directory(home_ / ".config");  // an ancestor that was missing
  std::ofstream(home_ / ".config" / "gh") << "token";
  const HiddenView nested = View();
  EXPECT_TRUE(Has(Paths(nested.scan.present), home_ / ".config/gh"));
  EXPECT_FALSE(Has(nested.readable, home_ / ".config")) << "split around the secret";
  fs::remove(home_ / ".aws");
  EXPECT_TRUE(Has(Paths(View().scan.absent), home_ / ".aws"));
  ASSERT_EQ(::rename((home_ / ".config/gh").c_str(), (home_ / "project/gh").c_str()), 0);
  EXPECT_TRUE(Has(Paths(View().scan.absent), home_ / ".config/gh"));
}

TEST_F(HiddenWatchTest, ANewEntryBesideASecretIsGrantedByTheNextPlan) {
  fs::create_directory(home_ / ".ssh");
  EXPECT_FALSE(Has(View().readable, home_ / "later"));
  fs::create_directory(home_ / "later");
  EXPECT_TRUE(Has(View().readable, home_ / "later"));
  fs::remove(home_ / "later");
  fs::create_directory_symlink(home_ / "project", home_ / "later");  // a symlink is never granted
  EXPECT_FALSE(Has(View().readable, home_ / "later"));
}

TEST_F(HiddenWatchTest, ASymlinkOnTheWayIsResolvedAgainForEveryPlan) {
  fs::create_directory(home_ / "real-kube");
  fs::create_directory_symlink(home_ / "real-kube", home_ / ".kube");
  EXPECT_TRUE(Has(Paths(View().scan.present), home_ / "real-kube"));
  const std::uint64_t scans = cache_.scans();
  (void)View();
  EXPECT_GT(cache_.scans(), scans) << "realpath looked where no watch is: never cached";
}

// A bind mount changes what a path names without an inotify event: the mount table's change
// forces the scan. In a child with its own user and mount namespaces.
TEST_F(HiddenWatchTest, AMountOverAWatchedDirectoryIsSeen) {
  fs::create_directories(home_ / "elsewhere/.ssh");
  fs::create_directory(home_ / "mnt");
  const int code = ExitCodeInChild([&] {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return kChildSkipped;
    const std::vector<fs::path> homes = {home_ / "mnt"};
    HiddenViewCache cache;
    auto present = [&] {
      return Paths(cache.View(config_, homes, AllowList::kPresentAndAbsent).scan.present);
    };
    if (Has(present(), home_ / "mnt/.ssh")) return 10;
    (void)present();  // cached from here
    if (::mount((home_ / "elsewhere").c_str(), (home_ / "mnt").c_str(), nullptr, MS_BIND,
                nullptr) != 0) {
      return kChildSkipped;
    }
    return Has(present(), home_ / "mnt/.ssh") ? 0 : 11;
  });
  if (code == kChildSkipped) GTEST_SKIP() << "no user or mount namespace for the test";
  EXPECT_EQ(code, 0) << "10: present before the mount, 11: mount not seen";
}

// A plan without a cache (a one-shot process's) scans every time, and a session's cache is its
// own: another one has scanned nothing (nothing process-wide).
TEST_F(HiddenWatchTest, WithoutACacheEveryPlanScansAndEachCacheIsItsOwn) {
  auto fresh = [&] { return BuildHiddenView(config_, {home_}, AllowList::kPresentAndAbsent); };
  EXPECT_TRUE(Has(Paths(fresh().scan.absent), home_ / ".netrc"));
  std::ofstream(home_ / ".netrc") << "machine x";
  EXPECT_TRUE(Has(Paths(fresh().scan.present), home_ / ".netrc"));
  EXPECT_EQ(cache_.scans(), 0u);
  (void)View();
  EXPECT_GT(cache_.scans(), 0u);
  HiddenViewCache other;
  EXPECT_EQ(other.scans(), 0u);
}

}  // namespace
}  // namespace cordon::plan
#endif
