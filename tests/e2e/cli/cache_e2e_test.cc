// `cordon cache`: where the tools' caches are, what a command left there, and clearing them —
// all of them or one tool's — without touching what a link in them points to. Through the real
// binary as a user runs it (decision 0041).
#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using CacheCommand = CliTest;

TEST_F(CacheCommand, ACommandFillsTheCacheAndClearEmptiesItOneToolOrAll) {
  const std::filesystem::path shared = home_ / ".cache/cordon/tool-caches/shared";
  Outcome empty = Cordon({"cache"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_NE(empty.out.find("no cache made yet"), std::string::npos) << empty.out;

  Outcome run = Cordon({"run", "-c",
                        "mkdir -p \"$GOCACHE\" \"$npm_config_cache\" && head -c 300000 /dev/zero > "
                        "\"$GOCACHE/obj\" && echo t > \"$npm_config_cache/tarball\""});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(std::filesystem::exists(shared / "go-build/obj"));
  Outcome status = Cordon({"cache", "status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("shared"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(" KiB"), std::string::npos) << status.out;

  // A link a command left in the cache: clearing removes the link, not what it names.
  std::filesystem::create_directories(home_ / "precious");
  std::filesystem::create_directory_symlink(home_ / "precious", shared / "npm/link");
  WriteFile(home_ / "precious/file", "kept\n");

  Outcome go = Cordon({"cache", "clear", "go"});
  EXPECT_EQ(go.exit_code, 0) << go.err;
  EXPECT_FALSE(std::filesystem::exists(shared / "go-build/obj"));
  EXPECT_TRUE(std::filesystem::exists(shared / "npm/tarball")) << "only go's part is cleared";

  Outcome all = Cordon({"cache", "clear"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_TRUE(std::filesystem::is_directory(shared));
  EXPECT_TRUE(std::filesystem::is_empty(shared));
  EXPECT_EQ(ReadFile(home_ / "precious/file"), "kept\n");
}

TEST_F(CacheCommand, AnUnknownToolIsRefusedNamingTheKnownOnes) {
  Outcome o = Cordon({"cache", "clear", "pnpm"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("unknown tool \"pnpm\""), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cargo"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace cordon::e2e
