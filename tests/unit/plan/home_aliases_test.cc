#include "plan/home_aliases.h"

#include <gtest/gtest.h>

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// A root file system on 254:0 with /home on it, /data on 8:1, and binds of each.
constexpr std::string_view kTable =
    "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "30 26 8:1 / /data rw - ext4 /dev/sdb rw\n"
    "40 26 254:0 /home /srv/all\\040homes rw - ext4 /dev/vda rw\n"  // all of /home
    "41 26 254:0 /home/me/proj /work rw - ext4 /dev/vda rw\n"       // a project of a home
    "42 26 254:0 / /mnt/rootfs ro - ext4 /dev/vda rw\n"             // the whole root fs
    "43 26 254:0 /etc/hosts /srv/hosts rw - ext4 /dev/vda rw\n"     // elsewhere: no alias
    "44 26 8:1 /home /srv/other-disk rw - ext4 /dev/sdb rw\n"       // another disk's /home
    "45 26 254:0 /home/me /home/me/inside rw - ext4 /dev/vda rw\n"  // inside the home
    "garbage line\n"
    "46 26 0:50 relative /x rw - tmpfs tmpfs rw\n";

bool Has(const std::vector<Alias>& aliases, const fs::path& path, bool whole) {
  for (const Alias& a : aliases) {
    if (a.path == path) return a.whole == whole;
  }
  return false;
}

TEST(MountInfo, ParsesDeviceRootAndMountPointDecodingEscapesAndSkipsWhatDoesNotParse) {
  const std::vector<MountEntry> entries = ParseMountInfo(kTable);
  ASSERT_EQ(entries.size(), 8u);
  EXPECT_EQ(entries[2].device, "254:0");
  EXPECT_EQ(entries[2].root, "/home");
  EXPECT_EQ(entries[2].mount_point, "/srv/all homes");
  // The mount's own options: "ro" read-only, whatever the super block's say.
  EXPECT_FALSE(entries[0].read_only);
  EXPECT_TRUE(entries[4].read_only);
  EXPECT_TRUE(ParseMountInfo("1 2 3:4 /a /b rw,ro x").at(0).read_only);
  EXPECT_FALSE(ParseMountInfo("1 2 3:4 /a /b rw,nosuid,rorw x").at(0).read_only);
  EXPECT_TRUE(ParseMountInfo("").empty());
  EXPECT_TRUE(ParseMountInfo("1 2 3:4 /\n").empty()) << "too few fields";
  EXPECT_EQ(ParseMountInfo("1 2 3:4 /a /b\\134c x").at(0).mount_point, "/b\\c");
  EXPECT_EQ(ParseMountInfo("1 2 3:4 /a /b\\9 x").at(0).mount_point, "/b\\9") << "not octal";
}

TEST(HomeAliases, EveryOtherMountOfTheHomesTreeIsFoundAndNothingElse) {
  const std::vector<MountEntry> table = ParseMountInfo(kTable);
  const std::vector<Alias> aliases = AliasesOf("/home/me", table);
  EXPECT_TRUE(Has(aliases, "/srv/all homes/me", true));
  EXPECT_TRUE(Has(aliases, "/mnt/rootfs/home/me", true));
  EXPECT_TRUE(Has(aliases, "/work", false));
  // Inside the home too: in a workspace there it would show the home again.
  EXPECT_TRUE(Has(aliases, "/home/me/inside", true));
  // The twins: another disk's /home, a file elsewhere.
  EXPECT_EQ(aliases.size(), 4u);
  EXPECT_TRUE(AliasesOf("/home/me", {}).empty());
  // A directory on the other disk: aliased only by that disk's mounts.
  const std::vector<Alias> data = AliasesOf("/data/home", table);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_TRUE(Has(data, "/srv/other-disk", true));
}

TEST(HomeAliases, ARootHoldingAWholeSecondMountIsFoundButAProjectBoundAsTheWorkspaceIsNot) {
  const std::vector<MountEntry> table = ParseMountInfo(kTable);
  const auto found = FindAliasInRoots({"/home/me"}, {"/srv"}, table);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->alias, "/srv/all homes/me");
  EXPECT_EQ(found->dir, "/home/me");
  EXPECT_EQ(found->root, "/srv");
  EXPECT_FALSE(FindAliasInRoots({"/home/me"}, {"/work"}, table))
      << "a project of the home bound as the workspace is that project";
  EXPECT_FALSE(FindAliasInRoots({"/home/me"}, {"/srv/all homes/me/proj"}, table))
      << "a project below the home's second mount, as below the home";
  EXPECT_TRUE(FindAliasInRoots({"/home/me"}, {"/mnt"}, table));
  // A bind of / or /home inside a workspace in the home shows the home again.
  const auto inside = FindAliasInRoots({"/home/me"}, {"/home/me"}, table);
  EXPECT_FALSE(inside) << "a workspace that is the home is refused elsewhere; here it shows "
                          "nothing it does not show anyway";
  const auto in_project =
      FindAliasInRoots({"/home/me"}, {"/home/me/proj"},
                       ParseMountInfo("26 1 254:0 / / rw - ext4 x rw\n"
                                      "50 26 254:0 / /home/me/proj/sysroot rw - ext4 x rw\n"));
  ASSERT_TRUE(in_project);
  EXPECT_EQ(in_project->alias, "/home/me/proj/sysroot/home/me");
  // A part of the home that the root does not hold (a bind of ~/.config into the project):
  // refused; a part it holds anyway (a bind of ~/proj/data at ~/proj/mirror): not.
  const std::vector<MountEntry> parts = ParseMountInfo(
      "26 1 254:0 / / rw - ext4 x rw\n"
      "51 26 254:0 /home/me/.config /home/me/proj/cfg rw - ext4 x rw\n"
      "52 26 254:0 /home/me/proj/data /home/me/proj/mirror rw - ext4 x rw\n");
  const auto config_part = FindAliasInRoots({"/home/me"}, {"/home/me/proj"}, parts);
  ASSERT_TRUE(config_part);
  EXPECT_EQ(config_part->alias, "/home/me/proj/cfg");
  EXPECT_EQ(config_part->dir, "/home/me/.config");
  EXPECT_FALSE(FindAliasInRoots({"/home/me"}, {"/home/me/proj"},
                                ParseMountInfo("26 1 254:0 / / rw - ext4 x rw\n"
                                               "52 26 254:0 /home/me/proj/data "
                                               "/home/me/proj/mirror rw - ext4 x rw\n")));
}

}  // namespace
}  // namespace cordon::plan
