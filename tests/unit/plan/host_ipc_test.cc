#include "plan/host_ipc.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace cordon::plan {
namespace {

bool Has(const std::vector<MountOp>& ops, const std::filesystem::path& p) {
  return std::any_of(ops.begin(), ops.end(), [&](const MountOp& op) { return op.path == p; });
}

TEST(HostIpc, NetworkDenyMasksTheWholeRuntimeDirectoryOnce) {
  auto ops = BuildRuntimeDirMasks({"/work"}, NetworkPolicy::kDeny);
  // /var/run points to /run: one mask, on the real directory.
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].kind, MountOpKind::kMaskDirectory);
  EXPECT_EQ(ops[0].path, "/run");
}

TEST(HostIpc, NetworkAllowMasksTheRuntimeDirectoryButKeepsNameResolution) {
  auto ops = BuildRuntimeDirMasks({"/work"}, NetworkPolicy::kAllow);
  EXPECT_FALSE(Has(ops, "/run"));
  for (const MountOp& op : ops) {
    EXPECT_TRUE(op.optional) << op.path;
    EXPECT_NE(op.path, "/run/systemd/resolve");
    EXPECT_NE(op.path, "/run/systemd") << "descended into, not masked whole";
    EXPECT_NE(op.path, "/run/shm") << "a symlink is left alone";
  }
  if (std::filesystem::exists("/run/user")) {
    EXPECT_TRUE(Has(ops, "/run/user"));
  }
  if (std::filesystem::exists("/run/dbus")) {
    EXPECT_TRUE(Has(ops, "/run/dbus"));
  }
}

TEST(HostIpc, ARuntimeDirectoryHoldingAWritableRootIsNotMasked) {
  EXPECT_TRUE(BuildRuntimeDirMasks({"/run/user"}, NetworkPolicy::kDeny).empty());
  EXPECT_TRUE(BuildRuntimeDirMasks({"/run/user"}, NetworkPolicy::kAllow).empty());
}

TEST(HostIpc, ProcNetUnixYieldsOnlyPathnameSockets) {
  const std::string text =
      "Num       RefCount Protocol Flags    Type St Inode Path\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 20 /run/docker.sock\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 21 @/tmp/.X11-unix/X0\n"
      "0000000000000000: 00000003 00000000 00000000 0001 03 22\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 23 /home/u/my sock\n"
      "0000000000000000: 00000002 00000000 00010000 0001 01 24 relative.sock\n";
  const auto paths = ParseProcNetUnix(text);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0], "/run/docker.sock");
  EXPECT_EQ(paths[1], "/home/u/my sock");
}

TEST(HostIpc, RootOnlyFilesInEtcAreMaskedAndWorldReadableOnesAreNot) {
  auto ops = BuildRootOnlyMasks();
  if (std::filesystem::exists("/etc/shadow")) {
    EXPECT_TRUE(Has(ops, "/etc/shadow"));
  }
  EXPECT_FALSE(Has(ops, "/etc/passwd"));
  EXPECT_FALSE(Has(ops, "/etc/hosts"));
}

// A private copy of the shape of /etc: which entries get a mask is decided by the mode bits alone.
class RootOnlyScan : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "cordon-etc.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    etc_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(etc_); }

  void File(const std::string& name, mode_t mode) {
    const std::filesystem::path path = etc_ / name;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << path;
    ::close(fd);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }
  void Dir(const std::string& name, mode_t mode) {
    const std::filesystem::path path = etc_ / name;
    ASSERT_EQ(::mkdir(path.c_str(), 0700), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }

  std::filesystem::path etc_;
};

TEST_F(RootOnlyScan, MasksEntriesOthersCannotReadTwoLevelsDeepAndNothingElse) {
  File("shadow", 0640);
  File("passwd", 0644);
  Dir("ssl", 0755);
  Dir("ssl/private", 0700);
  File("ssl/private/key.pem", 0600);  // inside a masked directory: covered by its mask
  File("ssl/cert.pem", 0644);
  Dir("ssh", 0755);
  File("ssh/host_key", 0600);
  Dir("deep", 0755);
  Dir("deep/er", 0755);
  File("deep/er/secret", 0600);  // third level: beyond the scan (decision 0006)
  ASSERT_EQ(::symlink((etc_ / "shadow").c_str(), (etc_ / "link-to-shadow").c_str()), 0);

  const std::vector<MountOp> ops = BuildRootOnlyMasks(etc_);
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].path, etc_ / "shadow");
  EXPECT_EQ(ops[0].kind, MountOpKind::kMaskFile);
  EXPECT_EQ(ops[1].path, etc_ / "ssh/host_key");
  EXPECT_EQ(ops[1].kind, MountOpKind::kMaskFile);
  EXPECT_EQ(ops[2].path, etc_ / "ssl/private");
  EXPECT_EQ(ops[2].kind, MountOpKind::kMaskDirectory);
  for (const MountOp& op : ops) EXPECT_TRUE(op.optional) << op.path;
}

TEST_F(RootOnlyScan, AWorldReadableTreeGetsNoMask) {
  File("hosts", 0644);
  Dir("apt", 0755);
  File("apt/sources.list", 0644);
  EXPECT_TRUE(BuildRootOnlyMasks(etc_).empty());
}

TEST_F(RootOnlyScan, AMissingDirectoryGetsNoMask) {
  EXPECT_TRUE(BuildRootOnlyMasks(etc_ / "absent").empty());
}

}  // namespace
}  // namespace cordon::plan
