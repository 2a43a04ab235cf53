// Where a sandboxed command can write, checked on the host filesystem after the run. Every
// denied write has an allowed twin (the workspace, the private TMPDIR, or mode off).
//
// The test tree lives under the host's /tmp, which the sandbox shows as an empty read-only view
// around the workspace (decision 0046). What counts is the host side: those cases assert that
// nothing landed there.
#include <fmt/format.h>

#include <algorithm>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using FilesystemTest = KernelTest;

// `echo x > PATH`, reporting "wrote" or "refused" so a failure shows what happened inside.
std::string WriteShell(const std::filesystem::path& path) {
  return fmt::format("if echo cordon > '{0}' 2>/dev/null; then echo wrote; else echo refused; fi",
                     path.string());
}

TEST_F(FilesystemTest, WriteInTheWorkspaceLands) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, WriteShell(workspace_ / "made-inside"));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_EQ(result.stdout_data.data, "wrote\n") << Describe(result);
  EXPECT_EQ(ReadFile(workspace_ / "made-inside"), "cordon\n");
  EXPECT_TRUE(result.enforcement.filesystem);
  // The backend that ran is the one status names; under CORDON_TEST_BACKEND=bwrap, bubblewrap.
  EXPECT_EQ(result.enforcement.backend, session->GetCapabilities().backend);
  if (UnderBwrap()) {
    EXPECT_EQ(result.enforcement.backend, "bwrap");
  }
}

TEST_F(FilesystemTest, WriteInTheWorkspacesParentDoesNotLand) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, WriteShell(root_ / "parent-file"));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(Exists(root_ / "parent-file")) << Describe(result);
}

TEST_F(FilesystemTest, WriteInTheCallersHomeDoesNotLand) {
  // Both the absolute path of the caller's home and $HOME inside (a private directory).
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult absolute = Shell(*session, WriteShell(home_ / ".bashrc"));
  EXPECT_EQ(absolute.status, RunStatus::kExited) << Describe(absolute);
  const RunResult via_env = Shell(*session, "echo cordon > \"$HOME/.profile\" && echo \"$HOME\"");
  EXPECT_EQ(via_env.status, RunStatus::kExited) << Describe(via_env);
  EXPECT_NE(via_env.stdout_data.data, home_.string() + "\n") << "HOME is the caller's";
  EXPECT_FALSE(Exists(home_ / ".bashrc"));
  EXPECT_FALSE(Exists(home_ / ".profile"));
}

TEST_F(FilesystemTest, WriteInEtcDoesNotLand) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path target = "/etc/" + unique_;
  cleanup_.push_back(target);  // only ever there if the sandbox failed and we are root
  const RunResult result = Shell(*session, WriteShell(target));
  EXPECT_EQ(result.stdout_data.data, "refused\n") << Describe(result);
  EXPECT_FALSE(Exists(target));
}

TEST_F(FilesystemTest, WriteInTheHostsTmpDoesNotLandButPrivateTmpWorks) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::filesystem::path target = "/tmp/" + unique_ + "-from-sandbox";
  cleanup_.push_back(target);
  // The suite's workspace lies under the host's /tmp, so /tmp is an empty read-only view there
  // (decision 0046): the write is refused, and the private TMPDIR inside it takes scratch.
  const RunResult result =
      Shell(*session, WriteShell(target) + "; echo scratch > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"");
  EXPECT_EQ(result.stdout_data.data, "refused\nscratch\n") << Describe(result);
  EXPECT_FALSE(Exists(target));
}

// A workspace directly below /tmp or /var/tmp: what the command moves or writes beside it is
// refused, never put in a private layer that vanishes with the run; TMPDIR and HOME work.
TEST_F(FilesystemTest, AWorkspaceInTmpKeepsWhatIsMovedBesideIt) {
  for (const char* area : {"/tmp", "/var/tmp"}) {
    SCOPED_TRACE(area);
    std::string dir = std::string(area) + "/cordon-beside-XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const std::filesystem::path parent = dir;
    cleanup_.push_back(parent);
    const std::filesystem::path workspace = parent / "ws";
    std::filesystem::create_directory(workspace);
    test_support::WriteFile(workspace / "f", "precious\n");
    auto session = SessionOrSkip(MakeConfig(), workspace);
    if (!session) return;
    const RunResult moved = Shell(
        *session,
        "mv f ../f 2>/dev/null && echo moved || echo kept; " + WriteShell(parent / "g") +
            "; mkdir ../d 2>/dev/null && echo made || echo refused; "
            "echo s > \"$TMPDIR/s\" && echo h > \"$HOME/h\" && cat \"$TMPDIR/s\" \"$HOME/h\"");
    EXPECT_EQ(moved.stdout_data.data, "kept\nrefused\nrefused\ns\nh\n") << Describe(moved);
    EXPECT_EQ(ReadFile(workspace / "f"), "precious\n") << Describe(moved);
    EXPECT_FALSE(Exists(parent / "f"));
    EXPECT_FALSE(Exists(parent / "g"));
    // Twin: inside the workspace the same move lands on the host.
    const RunResult inside = Shell(*session, "mv f f2 && echo moved");
    EXPECT_EQ(inside.stdout_data.data, "moved\n") << Describe(inside);
    EXPECT_EQ(ReadFile(workspace / "f2"), "precious\n") << Describe(inside);
  }
}

// Twin of the test above: with the workspace outside both areas, /tmp is the private tmpfs,
// writable by any path, and what is written there is gone after the run.
TEST_F(FilesystemTest, AWorkspaceOutsideTmpLeavesTmpAPrivateWritableTmpfs) {
  const char* base = ::getenv("CORDON_ESCAPE_BASE");
  std::string dir = fmt::format("{}/cordon-outside-XXXXXX",
                                base != nullptr && base[0] == '/' ? base : "/var/lib");
  if (::mkdtemp(dir.data()) == nullptr) GTEST_SKIP() << "cannot make " << dir;
  cleanup_.push_back(dir);
  auto session = SessionOrSkip(MakeConfig(), dir);
  if (!session) return;
  const std::filesystem::path target = "/tmp/" + unique_ + "-outside";
  cleanup_.push_back(target);
  const RunResult result = Shell(
      *session, WriteShell(target) + fmt::format("; cat '{}'; echo \"$TMPDIR\"", target.string()));
  EXPECT_EQ(result.stdout_data.data, "wrote\ncordon\n/tmp\n") << Describe(result);
  EXPECT_FALSE(Exists(target));
}

TEST_F(FilesystemTest, PrivateTmpAndHomeAreGoneAfterTheCommand) {
  // Within one run TMPDIR and $HOME are writable (tools put caches there); the next run starts
  // with both empty again.
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult first = Shell(
      *session,
      "echo 1 > \"$TMPDIR/left-behind\" && mkdir -p \"$HOME/.cache/tool\" && "
      "echo 1 > \"$HOME/.cache/tool/x\" && cat \"$TMPDIR/left-behind\" \"$HOME/.cache/tool/x\"");
  EXPECT_EQ(first.stdout_data.data, "1\n1\n") << Describe(first);
  const RunResult second =
      Shell(*session, "ls -A \"$TMPDIR\" \"$HOME\" | grep -c -e left-behind -e .cache");
  EXPECT_EQ(second.stdout_data.data, "0\n") << Describe(second);
}

// What a command leaves in its private scratch space vanishes with it: the run reports how
// much (docs/denials.md), from cordon-init on the native backend. Twin: a command that writes
// only in the workspace reports nothing of the kind (cordon's own files there do not count).
TEST_F(FilesystemTest, WhatTheCommandLeavesInItsScratchIsReportedAsDiscarded) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  auto discarded = [](const RunResult& r) {
    return std::find_if(r.denials.begin(), r.denials.end(),
                        [](const Denial& d) { return d.kind == "discarded"; });
  };
  const RunResult left = Shell(*session,
                               "mkdir -p \"$HOME/.cache\" && "
                               "head -c 524288 /dev/zero > \"$HOME/.cache/blob\" && "
                               "head -c 262144 /dev/zero > /var/tmp/blob && "
                               "head -c 262144 /dev/zero > /dev/shm/blob && echo written");
  EXPECT_EQ(left.stdout_data.data, "written\n") << Describe(left);
  if (!UnderBwrap()) {
    const auto found = discarded(left);
    ASSERT_NE(found, left.denials.end()) << Describe(left);
    EXPECT_EQ(found->layer, "mount view");
    // 1 MiB of data, page-aligned; a directory may add a page.
    EXPECT_TRUE(found->target.starts_with("1.0 MiB left in the private")) << found->target;
  }
  const RunResult kept = Shell(*session, "head -c 524288 /dev/zero > kept && echo written");
  EXPECT_EQ(kept.stdout_data.data, "written\n") << Describe(kept);
  EXPECT_EQ(discarded(kept), kept.denials.end()) << Describe(kept);
  EXPECT_EQ(std::filesystem::file_size(workspace_ / "kept"), 524288u);
}

TEST_F(FilesystemTest, ModeOffIsUnconfinedSoTheSameWritesLand) {
  // The twin of the denials above: without a sandbox the parent and the host's /tmp are
  // writable (as the caller), so the denials are the sandbox's doing.
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!session) return;
  const std::filesystem::path host_tmp = "/tmp/" + unique_ + "-from-off";
  cleanup_.push_back(host_tmp);
  const RunResult result =
      Shell(*session, WriteShell(root_ / "parent-file") + "; " + WriteShell(host_tmp));
  EXPECT_EQ(result.stdout_data.data, "wrote\nwrote\n") << Describe(result);
  EXPECT_TRUE(Exists(root_ / "parent-file"));
  EXPECT_TRUE(Exists(host_tmp));
  EXPECT_FALSE(result.enforcement.filesystem);
}

TEST_F(FilesystemTest, ReadOnlyModeRefusesTheWorkspaceButAllowsThePrivateTmpdir) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly));
  if (!session) return;
  const RunResult result =
      Shell(*session, WriteShell(workspace_ / "made-inside") +
                          "; echo scratch > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"");
  EXPECT_EQ(result.stdout_data.data, "refused\nscratch\n") << Describe(result);
  EXPECT_FALSE(Exists(workspace_ / "made-inside"));
}

TEST_F(FilesystemTest, ConfiguredWritableRootIsWritableAndItsSiblingIsNot) {
  const std::filesystem::path extra = root_ / "cache";
  const std::filesystem::path sibling = root_ / "other";
  std::filesystem::create_directory(extra);
  std::filesystem::create_directory(sibling);
  Config config = MakeConfig();
  config.sandbox.writable_roots = {extra};
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult result =
      Shell(*session, WriteShell(extra / "f") + "; " + WriteShell(sibling / "f"));
  EXPECT_TRUE(result.stdout_data.data.starts_with("wrote\n")) << Describe(result);
  EXPECT_TRUE(Exists(extra / "f"));
  EXPECT_FALSE(Exists(sibling / "f")) << Describe(result);
}

// A writable root where the sandbox puts its own view would take writes that never reach the
// host (natively a private /dev/shm; a masked hidden directory): refused with the reason,
// before anything runs. The twin is the test above: a root elsewhere is writable.
TEST_F(FilesystemTest, AWritableRootTheSandboxReplacesIsRefusedWithTheReason) {
  const std::filesystem::path secrets = root_ / "secrets";
  std::filesystem::create_directories(secrets / "cache");
  const std::pair<std::filesystem::path, const char*> cases[] = {
      {"/dev/shm", "never reach the host"}, {secrets / "cache", "hidden path"}};
  for (const auto& [writable, reason] : cases) {
    Config config = MakeConfig();
    config.sandbox.writable_roots = {writable};
    config.sandbox.hidden_paths = {secrets};
    auto session = SessionOrSkip(config);
    if (!session) return;
    const RunResult result = Shell(*session, "echo ran > ran.txt");
    EXPECT_EQ(result.status, RunStatus::kSetupFailed) << writable << Describe(result);
    EXPECT_NE(result.error.find(reason), std::string::npos) << writable << Describe(result);
    EXPECT_FALSE(Exists(workspace_ / "ran.txt")) << writable;
  }
}

TEST_F(FilesystemTest, SymlinkInTheWorkspaceDoesNotCarryAWriteOutside) {
  std::filesystem::create_directory_symlink(root_, workspace_ / "escape");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, WriteShell(workspace_ / "escape" / "via-link"));
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(Exists(root_ / "via-link")) << Describe(result);
}

TEST_F(FilesystemTest, WorkingDirectoryInsideTheWorkspaceIsUsedAndOneOutsideIsRefused) {
  std::filesystem::create_directory(workspace_ / "sub");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest inside;
  inside.argv = {"pwd"};
  inside.cwd = workspace_ / "sub";
  const RunResult ok = session->Run(inside);
  EXPECT_EQ(ok.stdout_data.data, (workspace_ / "sub").string() + "\n") << Describe(ok);

  CommandRequest outside;
  outside.argv = {"pwd"};
  outside.cwd = root_;
  const RunResult refused = session->Run(outside);
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed);
  EXPECT_NE(refused.error.find("outside the workspace"), std::string::npos) << refused.error;
}

}  // namespace
}  // namespace cordon::kernel_test
