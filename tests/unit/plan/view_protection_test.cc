#include "plan/view_protection.h"

#include <gtest/gtest.h>

namespace cordon::plan {
namespace {

// The view of a command of an outer cordon: the host read-only, the workspace /w bound
// writable, its .git and .claude bound read-only onto themselves, .github pinned (bound onto
// itself, writable) with .github/hooks read-only below it, and a writable mount inside .git.
constexpr std::string_view kOuterView =
    "1 0 254:0 / / ro - ext4 /dev/vda rw\n"
    "2 1 254:0 /w /w rw - ext4 /dev/vda rw\n"
    "3 2 254:0 /w/.git /w/.git ro - ext4 /dev/vda rw\n"
    "4 2 254:0 /w/.claude /w/.claude ro - ext4 /dev/vda rw\n"
    "5 2 254:0 /w/.github /w/.github rw - ext4 /dev/vda rw\n"
    "6 5 254:0 /w/.github/hooks /w/.github/hooks ro - ext4 /dev/vda rw\n"
    "7 2 254:0 /w/sub/.git /w/sub/.git ro - ext4 /dev/vda rw\n"
    "8 1 254:0 /v /v rw - ext4 /dev/vda rw\n"
    "9 8 254:0 /v/.git /v/.git ro - ext4 /dev/vda rw\n"
    "10 9 0:40 / /v/.git/cache rw - tmpfs tmpfs rw\n";

class ViewProtectionTest : public ::testing::Test {
 protected:
  bool Held(const char* entry, std::vector<std::filesystem::path> writable = {"/w"}) const {
    return HeldReadOnlyByView(entry, writable, table_);
  }
  std::vector<MountEntry> table_ = ParseMountInfo(kOuterView);
};

TEST_F(ViewProtectionTest, EntriesBoundReadOnlyAreHeldAndWritableOnesAreNot) {
  EXPECT_TRUE(Held("/w/.git"));
  EXPECT_TRUE(Held("/w/.git/hooks/pre-commit")) << "beneath a read-only mount";
  EXPECT_TRUE(Held("/w/.claude"));
  // Twins: an entry in the writable workspace itself, absent or present, can be made there.
  EXPECT_FALSE(Held("/w/.mcp.json"));
  EXPECT_FALSE(Held("/w/.vscode"));
}

TEST_F(ViewProtectionTest, TheDirectoriesOnTheWayMustBePinned) {
  // .github is a mount point (it cannot be renamed away), hooks read-only below it.
  EXPECT_TRUE(Held("/w/.github/hooks"));
  // sub is an ordinary directory of the workspace: `mv sub x; mkdir -p sub/.git` would do.
  EXPECT_FALSE(Held("/w/sub/.git"));
  // Not when sub is itself a writable root: renaming it needs its parent, also writable here.
  EXPECT_FALSE(Held("/w/sub/.git", {"/w", "/w/sub"}));
  // ...but fine when the root's parent is no writable root's.
  EXPECT_TRUE(Held("/w/sub/.git", {"/w/sub"}));
}

TEST_F(ViewProtectionTest, AWritableMountBelowTheEntryIsNotHeld) {
  EXPECT_FALSE(Held("/v/.git", {"/v"}));
}

TEST_F(ViewProtectionTest, OutsideEveryWritableRootAReadOnlyMountHolds) {
  EXPECT_TRUE(Held("/etc/passwd"));
  EXPECT_FALSE(HeldReadOnlyByView("/w/.git", {"/w"}, {})) << "no table: nothing is known";
}

TEST_F(ViewProtectionTest, TheFirstEntryNotHeldIsNamed) {
  EXPECT_EQ(FirstNotHeldByView({"/w/.git", "/w/.claude"}, {"/w"}, table_), std::nullopt);
  EXPECT_EQ(FirstNotHeldByView({"/w/.git", "/w/.envrc", "/w/.vscode"}, {"/w"}, table_),
            std::filesystem::path("/w/.envrc"));
}

}  // namespace
}  // namespace cordon::plan
