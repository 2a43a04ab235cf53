#include "plan/hidden_paths.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "in_child.h"

namespace cordon::plan {
namespace {

class HiddenPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cordon-hidden-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    home_ = dir;
  }
  void TearDown() override { std::filesystem::remove_all(home_); }
  bool Has(const std::vector<MountOp>& ops, MountOpKind kind, const std::filesystem::path& p) {
    return std::any_of(ops.begin(), ops.end(),
                       [&](const MountOp& op) { return op.kind == kind && op.path == p; });
  }
  std::filesystem::path home_;
};

// The test home lies under /tmp, which the sandbox replaces: it is in view only when the
// workspace (or a writable root) holds it, so the tests pass it as the workspace.
std::vector<MountOp> Ops(const SandboxConfig& config, const std::filesystem::path& home,
                         const std::vector<std::filesystem::path>& roots = {}) {
  return BuildHiddenPathOps(FindHiddenTargets(config, {home}), roots, home);
}

TEST_F(HiddenPaths, DirectoriesAndFilesOfTheBuiltinListAreMasked) {
  std::filesystem::create_directory(home_ / ".ssh");
  std::ofstream(home_ / ".netrc") << "secret";
  std::ofstream(home_ / "notes.txt") << "not secret";
  auto ops = Ops({}, home_);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, home_ / ".ssh"));
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / ".netrc"));
  EXPECT_FALSE(Has(ops, MountOpKind::kMaskFile, home_ / "notes.txt"));
  EXPECT_EQ(ops.size(), 2u) << "absent entries of the list are skipped";
  for (const MountOp& op : ops) EXPECT_FALSE(op.optional) << "a vanished secret fails the run";
}

TEST_F(HiddenPaths, ASymlinkedSecretIsMaskedAtItsTarget) {
  std::filesystem::create_directory(home_ / "real-aws");
  std::filesystem::create_directory_symlink(home_ / "real-aws", home_ / ".aws");
  auto ops = Ops({}, home_);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskDirectory, home_ / "real-aws"));
}

TEST_F(HiddenPaths, ConfiguredPathsAreAddedAndAnEmptyHomeAddsNothing) {
  std::ofstream(home_ / "token") << "x";
  SandboxConfig config;
  config.hidden_paths = {home_ / "token", home_ / "absent"};
  auto ops = BuildHiddenPathOps(FindHiddenTargets(config, {}), {}, home_);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / "token"));
}

TEST_F(HiddenPaths, ASecretBelowAWritableRootHasItsAncestorsPinnedFirst) {
  std::filesystem::create_directories(home_ / "a" / "b");
  std::ofstream(home_ / "a" / "b" / "prod.env") << "x";
  SandboxConfig config;
  config.hidden_paths = {home_ / "a" / "b" / "prod.env"};
  auto ops = Ops(config, home_, {home_});
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].path, home_ / "a");
  EXPECT_EQ(ops[1].path, home_ / "a" / "b");
  EXPECT_EQ(ops[0].kind, MountOpKind::kBindWritable);
  EXPECT_TRUE(ops[0].optional);
  EXPECT_TRUE(Has(ops, MountOpKind::kMaskFile, home_ / "a" / "b" / "prod.env"));
  // Twin: outside a writable root nothing can move it, so nothing is pinned.
  EXPECT_EQ(Ops(config, home_).size(), 1u);
}

TEST_F(HiddenPaths, SecretsUnderThePrivateTmpAreNotMaskedUnlessAWorkspaceHoldsThem) {
  std::filesystem::create_directory(home_ / ".ssh");
  EXPECT_TRUE(BuildHiddenPathOps(FindHiddenTargets({}, {home_}), {}, "/nonexistent").empty());
  EXPECT_EQ(BuildHiddenPathOps(FindHiddenTargets({}, {home_}), {}, home_).size(), 1u);
}

// ScanHiddenPaths walks each candidate with lstat below the canonical home; wherever that walk
// meets a symlink, "." or "..", it resolves as realpath does. Each case of both routes.
TEST_F(HiddenPaths, TheScanPlacesEachCandidateWhereRealpathWould) {
  std::ofstream(home_ / ".config") << "a file where a directory is expected";
  std::filesystem::create_directory(home_ / ".docker");
  std::filesystem::create_directory(home_ / "kube-real");
  std::filesystem::create_directory_symlink(home_ / "kube-real", home_ / ".kube");
  std::filesystem::create_directory_symlink(home_ / "nowhere", home_ / ".gnupg");  // dangling
  std::filesystem::create_directory(home_ / "codex-real");
  std::filesystem::create_directory_symlink(home_ / "codex-real", home_ / ".codex");
  std::filesystem::create_directory(home_ / "a");
  std::ofstream(home_ / "token") << "x";
  SandboxConfig config;
  config.hidden_paths = {home_ / "a" / ".." / "token", home_ / "missing-token"};
  const HiddenScan scan = ScanHiddenPaths(config, {home_});
  auto in = [](const std::vector<HiddenTarget>& list, const std::filesystem::path& p) {
    return std::any_of(list.begin(), list.end(),
                       [&](const HiddenTarget& t) { return t.path == p; });
  };
  EXPECT_TRUE(in(scan.present, home_ / "kube-real")) << "a symlink is followed to its target";
  EXPECT_TRUE(in(scan.present, home_ / "token")) << "\"..\" resolved";
  EXPECT_EQ(scan.present.size(), 2u);
  EXPECT_TRUE(in(scan.absent, home_ / ".docker/config.json")) << "in its existing parent";
  EXPECT_TRUE(in(scan.absent, home_ / ".cargo/credentials")) << "below a missing ancestor";
  EXPECT_TRUE(in(scan.absent, home_ / "codex-real/auth.json")) << "in its parent's target";
  EXPECT_TRUE(in(scan.absent, home_ / "missing-token"));
  EXPECT_TRUE(in(scan.absent, home_ / ".ssh"));
  // A file on the way (ENOTDIR) and a dangling symlink are neither: nothing to mask, nothing a
  // secret could appear at without replacing what is there.
  for (const char* gone : {".config/gh", ".config/gcloud", ".gnupg"}) {
    EXPECT_FALSE(in(scan.present, home_ / gone)) << gone;
    EXPECT_FALSE(in(scan.absent, home_ / gone)) << gone;
  }
  // The two lists are what FindHiddenTargets and FindAbsentHiddenPaths return.
  EXPECT_EQ(FindHiddenTargets(config, {home_}).size(), scan.present.size());
  EXPECT_EQ(FindAbsentHiddenPaths(config, {home_}).size(), scan.absent.size());
}

TEST_F(HiddenPaths, TheReadAllowListLeavesOutExactlyTheHiddenPaths) {
  std::filesystem::create_directory(home_ / ".ssh");
  std::filesystem::create_directory(home_ / "proj");
  std::ofstream(home_ / "notes.txt") << "x";
  std::filesystem::create_symlink(home_ / ".ssh", home_ / "link-to-ssh");
  auto readable = ReadAllowList(FindHiddenTargets({}, {home_}));
  auto has = [&](const std::filesystem::path& p) {
    return std::find(readable.begin(), readable.end(), p) != readable.end();
  };
  EXPECT_TRUE(has(home_ / "proj"));
  EXPECT_TRUE(has(home_ / "notes.txt"));
  EXPECT_TRUE(has("/usr"));
  EXPECT_FALSE(has(home_ / ".ssh"));
  EXPECT_FALSE(has(home_ / "link-to-ssh")) << "a symlink is checked at its target";
  EXPECT_FALSE(has(home_)) << "an ancestor of a hidden path is split, never granted whole";
  EXPECT_FALSE(has("/tmp"));
}

// Below a base (a grant of the hidden home): the base whole when no secret lies in it, around
// the secrets (present or absent) when one does, nothing when it is one itself.
TEST_F(HiddenPaths, TheReadAllowListBelowABaseLeavesOutOnlyTheSecretsInIt) {
  const std::filesystem::path config = home_ / ".config";
  std::filesystem::create_directories(config / "tool");
  std::ofstream(config / "tool/settings.toml") << "x";
  std::filesystem::create_directories(home_ / "other");
  const std::vector<HiddenTarget> targets = {{config / "gh", true, {}},  // absent: made later
                                             {home_ / ".ssh", true, {}}};
  EXPECT_EQ(ReadAllowList(targets, nullptr, home_ / "other"),
            std::vector<std::filesystem::path>{home_ / "other"});
  const std::vector<std::filesystem::path> around = ReadAllowList(targets, nullptr, config);
  EXPECT_EQ(around, std::vector<std::filesystem::path>{config / "tool"});
  EXPECT_TRUE(ReadAllowList(targets, nullptr, home_ / ".ssh").empty());
}

TEST_F(HiddenPaths, CallerHomesAreDeduplicatedAndCanonical) {
  auto homes = CallerHomes(home_ / ".");
  ASSERT_FALSE(homes.empty());
  EXPECT_EQ(homes.front(), home_);
  EXPECT_EQ(std::count(homes.begin(), homes.end(), home_), 1);
}

// The user database's answer is kept while /etc/passwd stays the same file, unchanged: a new
// /etc/passwd (here bound over it in a child's own user and mount namespaces, as uid 0 there)
// is asked again, and the home it names is the one whose secrets are hidden.
TEST_F(HiddenPaths, ThePasswdHomeFollowsAChangedUserDatabase) {
  std::filesystem::create_directory(home_ / "one");
  std::filesystem::create_directory(home_ / "two");
  for (const char* name : {"one", "two"}) {
    std::ofstream(home_ / fmt::format("passwd-{}", name))
        << fmt::format("root:x:0:0:root:{}:/bin/sh\n", (home_ / name).string());
  }
  const uid_t outer = ::geteuid();
  auto homes_are = [&](const char* name) {
    return CallerHomes(home_ / "absent") == std::vector<std::filesystem::path>{home_ / name};
  };
  auto bind_passwd = [&](const char* name) {
    const std::string source = (home_ / fmt::format("passwd-{}", name)).string();
    return ::mount(source.c_str(), "/etc/passwd", nullptr, MS_BIND, nullptr) == 0;
  };
  const int code = ExitCodeInChild([&] {
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return kChildSkipped;
    const std::string map = fmt::format("0 {} 1", outer);
    const int fd = ::open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, map.data(), map.size()) != static_cast<ssize_t>(map.size())) {
      return kChildSkipped;
    }
    ::close(fd);
    if (!bind_passwd("one")) return kChildSkipped;
    if (!homes_are("one")) return 10;
    if (!homes_are("one")) return 11;  // asked again, unchanged: the same answer
    if (!bind_passwd("two")) return kChildSkipped;
    return homes_are("two") ? 0 : 12;
  });
  if (code == kChildSkipped) GTEST_SKIP() << "no user or mount namespace for the test";
  EXPECT_EQ(code, 0) << "10: the first database's home not used, 11: not kept, 12: the new "
                        "database's home not used";
}

}  // namespace
}  // namespace cordon::plan
