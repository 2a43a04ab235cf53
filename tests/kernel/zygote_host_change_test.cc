// The zygote suite's host changes while a session lives (issue 23, decision 0033): masked
// files replaced, renamed over, unlinked and written again, checked out by git; the workspace
// and writable roots swapped for links. Each followed by commands that must still see every
// mask, on the library, server and MCP paths alike (ZygoteTest, zygote_fixture.h).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "session/run_for.h"
#include "zygote_fixture.h"

namespace cordon::kernel_test {
namespace {

// The host replaces a masked file while the session lives (an atomic save, `git checkout`,
// what passwd does to /etc/shadow): the kernel detaches every mount on the old file, in every
// mount namespace, so a zygote or prepared sandbox built before still has the path but no
// longer the mask. The plan names each mask's target by device and inode: a command must not
// run in a sandbox whose masks were made over another file.
TEST_P(ZygoteTest, ASecretReplacedOnTheHostWhileTheSessionLivesIsStillHidden) {
  Config config = MakeConfig();
  const std::filesystem::path secret = HideInWorkspace(config, "app.env", "TOKEN=first\n");
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult before = Joined(*session, "cat app.env; echo end");
  EXPECT_EQ(before.stdout_data.data, "end\n") << Describe(before);
  WaitForPrepared();
  // Atomic save: a new file renamed over the masked one.
  { std::ofstream(workspace_ / "app.env.new") << "TOKEN=renamed\n"; }
  std::filesystem::rename(workspace_ / "app.env.new", secret);
  const RunResult renamed = Joined(*session, "cat app.env; echo end");
  EXPECT_EQ(renamed.stdout_data.data, "end\n") << Describe(renamed);
  WaitForPrepared();
  // Unlinked and created again.
  std::filesystem::remove(secret);
  { std::ofstream(secret) << "TOKEN=recreated\n"; }
  const RunResult recreated = Joined(*session, "cat app.env; echo end");
  EXPECT_EQ(recreated.stdout_data.data, "end\n") << Describe(recreated);
  // Twin: a file saved the same way but not hidden is read as it is now.
  { std::ofstream(workspace_ / "plain.new") << "plain\n"; }
  std::filesystem::rename(workspace_ / "plain.new", workspace_ / "plain.txt");
  EXPECT_EQ(Joined(*session, "cat plain.txt").stdout_data.data, "plain\n");
  // Nothing changed since: the next command starts in a sandbox prepared over the new file,
  // and the mask holds there too. (Again while something else on the host changes the shape
  // meanwhile, a socket bound elsewhere by a test running beside this one, say.)
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    const RunResult again = Joined(*session, "cat app.env; echo end");
    EXPECT_EQ(again.stdout_data.data, "end\n") << Describe(again);
  }
}

// The window between a command's plan and its start: the host saves a masked file atomically
// after the plan named the old file (Caller::before_start runs right there), so the
// zygote's or the prepared sandbox's mask over it is detached by the kernel when the command
// starts in it. The command must still not read the new file (before: it did, for that one
// command).
TEST_P(ZygoteTest, ASecretReplacedBetweenPlanAndStartIsStillHidden) {
  CORDON_SKIP_UNLESS_LIBRARY("before_start runs in this process");
  Config config = MakeConfig();
  const std::filesystem::path secret = HideInWorkspace(config, "app.env", "TOKEN=first\n");
  auto session = SessionOrSkip(config);
  if (!session) return;
  EXPECT_EQ(Joined(*session, "cat app.env; echo end").stdout_data.data, "end\n");
  for (int i = 0; i < 3; ++i) {
    WaitForPrepared();
    CommandRequest request;
    request.shell_text = "cat app.env; cat plain.txt";
    session::Caller caller;
    caller.before_start = [&]() -> Result<void> {
      // Saved atomically on the host, each with a file beside it saved the same way (the twin:
      // read as it is now).
      std::ofstream(workspace_ / "app.env.new") << "TOKEN=saved" << i << "\n";
      std::filesystem::rename(workspace_ / "app.env.new", secret);
      std::ofstream(workspace_ / "plain.new") << "plain" << i << "\n";
      std::filesystem::rename(workspace_ / "plain.new", workspace_ / "plain.txt");
      return {};
    };
    const RunResult raced = session::RunFor(*session, request, caller);
    EXPECT_EQ(raced.stdout_data.data, fmt::format("plain{}\n", i)) << Describe(raced);
  }
}

// The same for a file only root may read in /etc (masked for a root caller), replaced the way
// useradd and passwd replace /etc/shadow. Planted in /etc, outside the private /tmp.
TEST_P(ZygoteTest, ARootOnlyFileReplacedOnTheHostIsStillHidden) {
  if (::geteuid() != 0) GTEST_SKIP() << "root-only files are masked for a root caller only";
  const std::filesystem::path secret = fmt::format("/etc/cordon-zygote-shadow-{}", unique_);
  const std::filesystem::path next = secret.string() + ".new";
  cleanup_.push_back(secret);
  cleanup_.push_back(next);
  auto plant = [](const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
    std::filesystem::permissions(
        path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  };
  plant(secret, "root:first\n");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string read = fmt::format("cat {}; echo end", secret.string());
  const RunResult before = Joined(*session, read);
  EXPECT_EQ(before.stdout_data.data, "end\n") << Describe(before);
  WaitForPrepared();
  plant(next, "root:renamed\n");
  std::filesystem::rename(next, secret);
  const RunResult after = Joined(*session, read);
  EXPECT_EQ(after.stdout_data.data, "end\n") << Describe(after);
  // Twin: a world-readable file in /etc replaced the same way is read as it is now. The
  // sandbox prepared before the rename was not used (its mask is of the old file); this command
  // waits for the one prepared over the new file, or a slow build (ASan) races past it.
  const std::filesystem::path open = fmt::format("/etc/cordon-zygote-open-{}", unique_);
  cleanup_.push_back(open);
  { std::ofstream(open) << "open\n"; }
  // Again while the Direct variant beside this one renames its own root-only file in /etc,
  // which every sandbox of a root caller masks too.
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    EXPECT_EQ(Joined(*session, "cat " + open.string()).stdout_data.data, "open\n");
  }
}

// The built-in credential locations of the caller's home, replaced on the host while the
// session lives: a file saved atomically (.netrc), a file unlinked and written again
// (.codex/auth.json), and a whole masked directory renamed over by a new one (.aws). The home
// is planted under /var/lib, outside the private /tmp, so that an unmasked file would be read.
TEST_P(ZygoteTest, BuiltInCredentialsReplacedOnTheHostStayHidden) {
  if (::geteuid() != 0) GTEST_SKIP() << "plants a home under /var/lib, which needs root";
  const std::filesystem::path base = fmt::format("/var/lib/cordon-zygote-home-{}", unique_);
  const std::filesystem::path home = base / "home";
  std::filesystem::create_directories(home / ".aws");
  std::filesystem::create_directories(home / ".codex");
  struct Remove {
    std::filesystem::path path;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } remove{base};
  auto save = [](const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path.string() + ".new") << text;
    std::filesystem::rename(path.string() + ".new", path);
  };
  save(home / ".netrc", "machine m password netrc-0\n");
  save(home / ".aws" / "credentials", "aws-0\n");
  save(home / ".codex" / "auth.json", "codex-0\n");
  save(home / "notes.txt", "notes-0\n");
  ::setenv("HOME", home.c_str(), 1);  // the caller's home (TearDown puts the test's back)
  // The masks of a read-only home are what this judges (a hidden one shows no notes.txt).
  Config config = MakeConfig();
  config.sandbox.home = HomeView::kReadOnly;
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::string read = fmt::format(
      "cd '{}' && cat .netrc .aws/credentials .codex/auth.json 2>/dev/null; cat notes.txt",
      home.string());
  EXPECT_EQ(Joined(*session, read).stdout_data.data, "notes-0\n");
  for (int i = 1; i <= 2; ++i) {
    WaitForPrepared();
    save(home / ".netrc", fmt::format("machine m password netrc-{}\n", i));
    std::filesystem::remove(home / ".codex" / "auth.json");
    std::ofstream(home / ".codex" / "auth.json") << fmt::format("codex-{}\n", i);
    std::filesystem::create_directory(home / ".aws.new");
    std::ofstream(home / ".aws.new" / "credentials") << fmt::format("aws-{}\n", i);
    std::filesystem::remove_all(home / ".aws");
    std::filesystem::rename(home / ".aws.new", home / ".aws");
    // Twin: a file of the home saved the same way, not a credential, is read as it is now.
    save(home / "notes.txt", fmt::format("notes-{}\n", i));
    const RunResult after = Joined(*session, read);
    EXPECT_EQ(after.stdout_data.data, fmt::format("notes-{}\n", i)) << Describe(after);
  }
  // Nothing changed since: the next command starts in a sandbox prepared over the new files.
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    const RunResult again = Joined(*session, read);
    EXPECT_EQ(again.stdout_data.data, "notes-2\n") << Describe(again);
  }
}

// A repository's tracked secret (sandbox.hidden_paths) and its .git, while the host runs
// `git checkout` between two commits during a session: git replaces the files it checks out,
// and the secret must stay hidden and .git read-only in every later command.
TEST_P(ZygoteTest, AGitCheckoutOnTheHostKeepsATrackedSecretHiddenAndGitReadOnly) {
  const std::filesystem::path ws = std::filesystem::canonical(workspace_);
  const std::string git = fmt::format(
      "cd '{}' && git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main "
      "-c core.hooksPath=/dev/null -c gc.auto=0 -c maintenance.auto=false",
      ws.string());
  auto host = [&](const std::string& command) {
    return std::system((git + " " + command + " >/dev/null 2>&1").c_str());
  };
  std::ofstream(ws / "app.env") << "TOKEN=one\n";
  std::ofstream(ws / "README") << "one\n";
  ASSERT_EQ(host("init -q"), 0);
  ASSERT_EQ(host("add app.env README && " + git + " commit -q -m one"), 0);
  std::ofstream(ws / "app.env") << "TOKEN=two\n";
  std::ofstream(ws / "README") << "two\n";
  ASSERT_EQ(host("commit -q -am two"), 0);
  Config config = MakeConfig();
  config.sandbox.hidden_paths.push_back(ws / "app.env");
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::string read = "cat app.env; cat README";
  EXPECT_EQ(Joined(*session, read).stdout_data.data, "two\n");
  for (const char* commit : {"HEAD~1", "main"}) {
    WaitForPrepared();
    ASSERT_EQ(host(fmt::format("checkout -q {}", commit)), 0) << commit;
    const RunResult after = Joined(*session, read);
    // Twin: the tracked file beside it is read as the checkout left it.
    EXPECT_EQ(after.stdout_data.data, std::string(commit) == "main" ? "two\n" : "one\n")
        << commit << ": " << Describe(after);
    WaitForPrepared();  // nothing changed since the read: a sandbox prepared over the new file
    const RunResult hook = Joined(*session, "echo 'touch pwned' > .git/hooks/post-checkout");
    EXPECT_NE(hook.exit_code, 0) << commit << ": " << Describe(hook);
    EXPECT_FALSE(Exists(ws / ".git" / "hooks" / "post-checkout")) << commit;
  }
  // Nothing changed since: the next command starts in a sandbox prepared over the files the
  // last checkout left (on a busy machine the host may still be settling at first).
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    EXPECT_EQ(Joined(*session, read).stdout_data.data, "two\n");
  }
}

// A workspace that is the host's /var/tmp itself: one-shot binds it over the private /var/tmp;
// each command of a zygote gets a fresh private tmpfs there, which must not cover the bind.
TEST_P(ZygoteTest, AWorkspaceThatIsVarTmpIsTheHostsOwnInEveryCommand) {
  const std::filesystem::path var_tmp = std::filesystem::canonical("/var/tmp");
  const std::string planted = fmt::format("cordon-zygote-planted-{}", unique_);
  const std::string written = fmt::format("cordon-zygote-written-{}", unique_);
  cleanup_.push_back(var_tmp / planted);
  cleanup_.push_back(var_tmp / written);
  { std::ofstream(var_tmp / planted) << "planted\n"; }
  auto session = SessionOrSkip(MakeConfig(), var_tmp);
  if (!session) return;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) WaitForPrepared();
    const RunResult read =
        Joined(*session, fmt::format("cat {}; echo {} > {}", planted, i, written));
    EXPECT_EQ(read.stdout_data.data, "planted\n") << Describe(read);
    EXPECT_EQ(read.exit_code, 0) << Describe(read);
    EXPECT_EQ(ReadFile(var_tmp / written), fmt::format("{}\n", i));
  }
  // Twin: the private /tmp of each command is still fresh (nothing of the host's there).
  const RunResult tmp = Joined(*session, "ls -A /tmp | grep -v '^.cordon-home$' | wc -l");
  EXPECT_EQ(tmp.stdout_data.data, "0\n") << Describe(tmp);
}

// The session's workspace is the directory it started in: its name swapped for a link to
// another directory (by anything that can write the parent, a concurrent command included) is
// refused, never bound writable in its place; swapped back, it runs again.
TEST_P(ZygoteTest, AWorkspaceSwappedForALinkIsRefusedNotBoundInItsPlace) {
  // Each `cordon run` names its directory afresh, as a one-shot run does (the race between
  // naming and serving it: ServedEquivalence); a kept session (library, MCP) is pinned.
  if (TestKernelPath() == KernelPath::kServer) {
    GTEST_SKIP() << "server path: every cordon run is a new caller of its directory";
  }
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  EXPECT_EQ(Joined(*session, "true").exit_code, 0);
  const std::filesystem::path elsewhere = root_ / "elsewhere";
  std::filesystem::create_directory(elsewhere);
  std::filesystem::rename(workspace_, root_ / "ws.moved");
  std::filesystem::create_directory_symlink(elsewhere, workspace_);
  const RunResult swapped = Shell(*session, "echo x > planted");
  EXPECT_EQ(swapped.status, RunStatus::kSetupFailed) << Describe(swapped);
  // The session's check, or (through cordon mcp) its working directory resolved first.
  EXPECT_TRUE(swapped.error.find("no longer the directory") != std::string::npos ||
              swapped.error.find("is outside the workspace") != std::string::npos)
      << Describe(swapped);
  EXPECT_FALSE(Exists(elsewhere / "planted"));
  // Another directory (not a link) at the same name: refused as well.
  std::filesystem::remove(workspace_);
  std::filesystem::create_directory(workspace_);
  const RunResult replaced = Shell(*session, "echo x > planted");
  EXPECT_EQ(replaced.status, RunStatus::kSetupFailed) << Describe(replaced);
  EXPECT_FALSE(Exists(workspace_ / "planted"));
  // Twin: the session's own directory back in place runs and writes there.
  std::filesystem::remove(workspace_);
  std::filesystem::rename(root_ / "ws.moved", workspace_);
  const RunResult back = Joined(*session, "echo x > planted");
  EXPECT_EQ(back.exit_code, 0) << Describe(back);
  EXPECT_EQ(ReadFile(workspace_ / "planted"), "x\n");
  // Nothing changed since: the next command starts in a sandbox prepared for it.
  const int starts = prepared_starts_;
  for (int i = 0; i < (prepared() ? 5 : 1) && prepared_starts_ == starts; ++i) {
    WaitForPrepared();
    EXPECT_EQ(Joined(*session, "cat planted").stdout_data.data, "x\n");
  }
}

// A configured writable root nested in the workspace is pinned too: a command that replaces it
// with a link to a directory outside (it can: the workspace is writable) must not make the
// next run bind the link's target writable.
TEST_P(ZygoteTest, AWritableRootReplacedWithALinkIsRefusedNotBoundInItsPlace) {
  const std::filesystem::path cache = workspace_ / "cache";
  const std::filesystem::path outside = root_ / "outside";
  std::filesystem::create_directory(cache);
  std::filesystem::create_directory(outside);
  Config config = MakeConfig();
  config.sandbox.writable_roots = {cache};
  auto session = SessionOrSkip(config);
  if (!session) return;
  // Twin first: the root is writable as configured.
  const RunResult twin = Joined(*session, "echo x > cache/made");
  EXPECT_EQ(twin.exit_code, 0) << Describe(twin);
  EXPECT_TRUE(Exists(cache / "made"));
  // The command itself swaps the root for a link to a directory outside the workspace.
  const RunResult swap =
      Joined(*session, fmt::format("mv cache cache.old && ln -s {} cache", outside.string()));
  EXPECT_EQ(swap.exit_code, 0) << Describe(swap);
  const RunResult next = Shell(*session, fmt::format("echo x > {}/planted", outside.string()));
  EXPECT_EQ(next.status, RunStatus::kSetupFailed) << Describe(next);
  // A kept session refuses the change; a new one (each served `cordon run`) the planted link.
  EXPECT_TRUE(next.error.find("no longer what this session started with") != std::string::npos ||
              next.error.find("a symbolic link inside") != std::string::npos)
      << Describe(next);
  EXPECT_FALSE(Exists(outside / "planted"));
  // Put back, it runs again.
  std::filesystem::remove(cache);
  std::filesystem::rename(workspace_ / "cache.old", cache);
  EXPECT_EQ(Shell(*session, "echo y > cache/again").exit_code, 0);
  EXPECT_TRUE(Exists(cache / "again"));
}

}  // namespace
}  // namespace cordon::kernel_test
