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

// `cordon cache seed` (decision 0049): what the host's npm cache holds reaches a sandboxed
// command through cordon's cache only after the seed (its twin: before it, nothing); the
// host's cache is never written, and a second seed replaces nothing a command wrote.
TEST_F(CacheCommand, SeedCopiesTheHostsCacheIntoCordonsAndLeavesTheHostsAlone) {
  const std::filesystem::path host = home_ / ".npm/_cacache";
  std::filesystem::create_directories(host / "content-v2");
  WriteFile(host / "content-v2/entry", "from the host\n");
  std::filesystem::create_directories(home_ / ".cargo/registry/cache");
  WriteFile(home_ / ".cargo/credentials.toml", "token = \"secret\"\n");
  WriteFile(home_ / ".cargo/registry/cache/c.crate", "crate\n");

  const char* read_seeded = "cat \"$npm_config_cache/_cacache/content-v2/entry\"";
  Outcome before = Cordon({"run", "-c", read_seeded});
  EXPECT_NE(before.exit_code, 0) << before.out;

  Outcome seed = Cordon({"cache", "seed"});
  ASSERT_EQ(seed.exit_code, 0) << seed.err;
  EXPECT_NE(seed.out.find("1 file"), std::string::npos) << seed.out;
  Outcome after = Cordon({"run", "-c", read_seeded});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, "from the host\n");
  // cargo: the registry, never the credentials beside it.
  const std::filesystem::path shared = home_ / ".cache/cordon/tool-caches/shared";
  EXPECT_EQ(ReadFile(shared / "cargo/registry/cache/c.crate"), "crate\n");
  EXPECT_FALSE(std::filesystem::exists(shared / "cargo/credentials.toml"));

  // A command's own entry is kept; a seed never replaces it.
  Outcome planted =
      Cordon({"run", "-c", "echo planted > \"$npm_config_cache/_cacache/content-v2/entry\""});
  ASSERT_EQ(planted.exit_code, 0) << planted.err;
  Outcome again = Cordon({"cache", "seed", "npm"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("0 files"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("1 already there"), std::string::npos) << again.out;
  EXPECT_EQ(ReadFile(shared / "npm/_cacache/content-v2/entry"), "planted\n");
  EXPECT_EQ(ReadFile(host / "content-v2/entry"), "from the host\n");
}

// A host cache whose path has a link below the home (what a command could plant in a project a
// tool's variable names) is not followed: refused, naming it, and the secret it leads to is
// not copied.
TEST_F(CacheCommand, SeedFollowsNoLinkInTheHostCachesPath) {
  std::filesystem::create_directories(home_ / ".ssh");
  WriteFile(home_ / ".ssh/id_ed25519", "PRIVATE KEY\n");
  std::filesystem::create_directories(home_ / ".npm");
  std::filesystem::create_directory_symlink(home_ / ".ssh", home_ / ".npm/_cacache");
  Outcome o = Cordon({"cache", "seed", "npm"});
  EXPECT_EQ(o.exit_code, 125) << o.out << o.err;
  EXPECT_NE(o.err.find("not followed"), std::string::npos) << o.err;
  EXPECT_FALSE(
      std::filesystem::exists(home_ / ".cache/cordon/tool-caches/shared/npm/_cacache/id_ed25519"));
}

// Nothing to seed with the tool caches off: refused, saying why.
TEST_F(CacheCommand, SeedWithTheToolCachesOffIsRefused) {
  WriteConfig(R"({"sandbox": {"tool_caches": "off"}})");
  Outcome o = Cordon({"cache", "seed"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("sandbox.tool_caches is off"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(home_ / ".cache/cordon/tool-caches/shared"));
}

TEST_F(CacheCommand, AnUnknownToolIsRefusedNamingTheKnownOnes) {
  Outcome o = Cordon({"cache", "clear", "pnpm"});
  EXPECT_EQ(o.exit_code, 125);
  EXPECT_NE(o.err.find("unknown tool \"pnpm\""), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("cargo"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace cordon::e2e
