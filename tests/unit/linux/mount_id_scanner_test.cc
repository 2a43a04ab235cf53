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
  std::vector<unsigned long> ids;
  MountIdScanner scanner;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    const std::string part = text.substr(at, piece);
    EXPECT_TRUE(scanner.Feed(part.data(), static_cast<long>(part.size()), [&](unsigned long id) {
      ids.push_back(id);
      return true;
    }));
  }
  return ids;
}

// The first field of every line, however the text is split into reads (a read may end inside
// an ID); the other numbers of a line (the parent's ID, the device) are not IDs.
TEST(MountIdScanner, ReadsTheFirstFieldOfEveryLineAcrossSplitReads) {
  const std::vector<unsigned long> expected = {22, 3105, 48};
  for (std::size_t piece : {1u, 2u, 3u, 7u, 4096u}) {
    EXPECT_EQ(Scan(kMountinfo, piece), expected) << "read " << piece << " bytes at a time";
  }
}

// The twin: a caller that has no room left stops the scan at once (the exec stub's E2BIG).
TEST(MountIdScanner, StopsWhenTheCallerHasNoRoom) {
  MountIdScanner scanner;
  std::vector<unsigned long> ids;
  const std::string text = kMountinfo;
  EXPECT_FALSE(scanner.Feed(text.data(), static_cast<long>(text.size()), [&](unsigned long id) {
    if (ids.size() == 2) return false;
    ids.push_back(id);
    return true;
  }));
  EXPECT_EQ(ids, (std::vector<unsigned long>{22, 3105}));
}

}  // namespace
}  // namespace cordon::linux_native
