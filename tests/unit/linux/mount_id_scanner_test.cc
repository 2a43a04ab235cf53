#include "linux/mount_id_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cordon::linux_native {
namespace {

constexpr const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "3105 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw\n"
    "48 3105 0:45 /secret /work/.env ro - tmpfs tmpfs ro\n";

std::vector<unsigned long> Scan(const std::string& text, std::size_t piece) {
  std::vector<unsigned long> keys;
  MountIdScanner scanner;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    const std::string part = text.substr(at, piece);
    EXPECT_TRUE(scanner.Feed(part.data(), static_cast<long>(part.size()), [&](unsigned long key) {
      keys.push_back(key);
      return true;
    }));
  }
  return keys;
}

// One key per line, the same however the text is split into reads (a read may end inside a
// field), and the same for the same mount whatever its options say or wherever a rename on
// the host has moved its paths.
TEST(MountIdScanner, KeysEveryLineAcrossSplitReads) {
  const std::vector<unsigned long> whole = Scan(kMountinfo, 4096);
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_NE(whole[0], whole[1]);
  EXPECT_NE(whole[1], whole[2]);
  for (std::size_t piece : {1u, 2u, 3u, 7u}) {
    EXPECT_EQ(Scan(kMountinfo, piece), whole) << "read " << piece << " bytes at a time";
  }
  EXPECT_EQ(Scan("48 3105 0:45 /secret /work/.env rw,nosuid - tmpfs tmpfs rw\n", 4096)[0],
            whole[2]);
  EXPECT_EQ(Scan("48 3105 0:45 /secret /work.moved/.env ro - tmpfs tmpfs ro\n", 4096)[0], whole[2]);
}

// The ID the kernel gave a detached mask's mount to a new mount elsewhere is another key: a
// view that lost its mask does not look intact because a cover took its number.
TEST(MountIdScanner, AReusedIdOnAnotherMountIsAnotherKey) {
  const std::vector<unsigned long> mask = Scan("48 3105 0:45 /secret /work/.env ro - x y ro\n", 7);
  const std::vector<unsigned long> cover =
      Scan("48 3105 8:1 /work/.mcp.json /work/.mcp.json ro - ext4 /dev/sda1 ro\n", 7);
  ASSERT_EQ(mask.size(), 1u);
  ASSERT_EQ(cover.size(), 1u);
  EXPECT_NE(mask[0], cover[0]);
}

// The twin: a caller that has no room left stops the scan at once (the exec stub's E2BIG).
TEST(MountIdScanner, StopsWhenTheCallerHasNoRoom) {
  MountIdScanner scanner;
  std::vector<unsigned long> keys;
  const std::string text = kMountinfo;
  EXPECT_FALSE(scanner.Feed(text.data(), static_cast<long>(text.size()), [&](unsigned long key) {
    if (keys.size() == 2) return false;
    keys.push_back(key);
    return true;
  }));
  const std::vector<unsigned long> all = Scan(kMountinfo, 4096);
  EXPECT_EQ(keys, (std::vector<unsigned long>(all.begin(), all.begin() + 2)));
}

}  // namespace
}  // namespace cordon::linux_native
