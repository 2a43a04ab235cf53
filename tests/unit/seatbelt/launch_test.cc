// The Seatbelt launcher checked from outside on Linux, against a FAKE sandbox-exec: a script
// the test writes, which records the argv, environment, working directory and the private
// directory's modes it received, then execs the command after "--" (as sandbox-exec does, minus
// the sandbox). The real sandbox is tested on macOS only (sandbox_macos_test.cc).
#include "seatbelt/launch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../exec/run_helpers.h"
#include "exec/command_pipes.h"
#include "exec/supervisor.h"

namespace cordon::seatbelt {
namespace {

namespace fs = std::filesystem;

class SeatbeltLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cordon-sb-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = fs::canonical(pattern);
    fs::create_directories(root_ / "ws");
    fs::create_directories(root_ / "record");
    fs::create_directories(root_ / "private");
    options_.sandbox_exec = root_ / "sandbox-exec";
    options_.private_base = root_ / "private";
    const fs::path rec = root_ / "record";
    std::ofstream(options_.sandbox_exec)
        << "#!/bin/sh\n"
        << "printf '%s\\0' \"$@\" > '" << rec.string() << "/argv'\n"
        << "/usr/bin/env -0 > '" << rec.string() << "/env'\n"
        << "pwd -P > '" << rec.string() << "/cwd'\n"
        << "/usr/bin/stat -c '%a' \"$HOME/..\" \"$HOME\" "
           "\"$TMPDIR\" > '"
        << rec.string() << "/modes'\n"
        << "while [ \"$#\" -gt 0 ]; do a=$1; shift; "
           "[ \"$a\" = -- ] && break; done\n"
        << "exec \"$@\"\n";
    fs::permissions(options_.sandbox_exec, fs::perms::owner_all);

    plan_.sandboxed = true;
    plan_.argv = {"true"};
    plan_.env = {"PATH=/usr/bin:/bin", "HOME=/tmp/.cordon-home", "LANG=C", "TMPDIR=/tmp"};
    plan_.workspace = root_ / "ws";
    plan_.cwd = root_ / "ws";
    plan_.mounts = {{plan::MountOpKind::kBindWritable, root_ / "ws"}};
    plan_.enforcement.network = true;  // network deny
    plan_.seccomp.sockets = plan::SocketPolicy::kUnixAndNetlink;
  }
  void TearDown() override { fs::remove_all(root_); }

  RunResult MustRun(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    Result<exec::CommandPipes> pipes = exec::CreateCommandPipes();
    Result<core::UniqueFd> dev_null = exec::OpenDevNull();
    EXPECT_TRUE(pipes && dev_null);
    Result<exec::LaunchedProcess> launched =
        Launch(plan_, exec::MakeStdio(*pipes, dev_null->get()), options_);
    pipes->CloseWriteEnds();
    EXPECT_TRUE(launched.has_value()) << launched.error().message;
    if (!launched) return {};
    exec::SuperviseOptions options;
    options.timeout = timeout;
    return exec::Supervise(
        std::move(*launched),
        exec::OutputReaders{std::move(pipes->stdout_read), std::move(pipes->stderr_read)}, options);
  }

  // A NUL-separated record of the fake, as a list.
  std::vector<std::string> Record(const char* name) {
    std::ifstream in(root_ / "record" / name, std::ios::binary);
    std::vector<std::string> out;
    for (std::string item; std::getline(in, item, '\0');) out.push_back(item);
    return out;
  }
  std::string RecordText(const char* name) {
    std::ifstream in(root_ / "record" / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The private directory the command got, from the HOME it saw.
  fs::path PrivateDirSeen() {
    for (const std::string& e : Record("env")) {
      if (e.starts_with("HOME=")) return fs::path(e.substr(5)).parent_path();
    }
    return {};
  }

  fs::path root_;
  LaunchOptions options_;
  plan::LaunchPlan plan_;
};

TEST_F(SeatbeltLaunch, ArgvIsProfileAndParametersThenTheCommandWithNoShell) {
  plan_.argv = {"true", "a b", "$HOME; ls"};
  EXPECT_EQ(MustRun().exit_code, 0);
  const std::vector<std::string> argv = Record("argv");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv[0], "-p");
  EXPECT_TRUE(argv[1].starts_with("(version 1)")) << argv[1];
  const auto dashdash = std::find(argv.begin(), argv.end(), "--");
  ASSERT_NE(dashdash, argv.end());
  // The command, word for word, right after "--": no sh -c, no quoting.
  EXPECT_EQ(std::vector<std::string>(dashdash + 1, argv.end()), plan_.argv);
  // Between the profile and "--": only -D NAME=VALUE pairs, the paths canonical.
  std::vector<std::string> params;
  for (auto it = argv.begin() + 2; it != dashdash; it += 2) {
    ASSERT_EQ(*it, "-D");
    ASSERT_NE(it + 1, dashdash);
    params.push_back(*(it + 1));
  }
  EXPECT_EQ(params.at(0), "WRITABLE_0=" + (root_ / "ws").string());
  EXPECT_EQ(params.at(1), "WRITABLE_1=" + PrivateDirSeen().string());
  EXPECT_EQ(argv[1].find(root_.string()), std::string::npos) << "a path is in the profile text";
}

TEST_F(SeatbeltLaunch, PathsAreResolvedBeforeTheyAreSortedSoNoProtectedEntryIsDropped) {
  // The plan names the workspace through a link (as /tmp is /private/tmp on macOS) and its
  // .git through the resolved path: the .git lies in the writable root once both are
  // resolved, and must be read-only there.
  fs::create_directories(root_ / "ws/.git");
  fs::create_symlink(root_ / "ws", root_ / "link");
  plan_.mounts = {{plan::MountOpKind::kBindWritable, root_ / "link"},
                  {plan::MountOpKind::kBindReadOnly, root_ / "ws/.git"}};
  EXPECT_EQ(MustRun().exit_code, 0);
  const std::vector<std::string> argv = Record("argv");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "READ_ONLY_0=" + (root_ / "ws/.git").string()),
            argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "WRITABLE_0=" + (root_ / "ws").string()),
            argv.end());
}

TEST_F(SeatbeltLaunch, MissingDirectoriesOnTheWayToAProtectedPathAreMadeForTheRun) {
  // .github/hooks is protected and absent, and so is .github: the profile pins .github (not
  // created, renamed or removed in any case), so the launcher makes it for the run — the
  // command can still add .github/workflows/ci.yml — and removes it after the run if empty.
  plan_.absent_protected = {root_ / "ws/.github/hooks"};
  plan_.argv = {"/bin/sh", "-c", "test -d .github"};
  EXPECT_EQ(MustRun().exit_code, 0) << "made for the run";
  EXPECT_FALSE(fs::exists(root_ / "ws/.github")) << "removed after it: empty";
  plan_.argv = {"/bin/sh", "-c", "mkdir -p .github/workflows && echo x > .github/workflows/ci.yml"};
  EXPECT_EQ(MustRun().exit_code, 0);
  EXPECT_TRUE(fs::exists(root_ / "ws/.github/workflows/ci.yml")) << "what the command made stays";
  // The pin covers the directory as an existing one.
  const std::vector<std::string> argv = Record("argv");
  EXPECT_TRUE(std::any_of(argv.begin(), argv.end(), [&](const std::string& word) {
    return word.starts_with("PINNED_") && word.ends_with("=" + (root_ / "ws/.github").string());
  }));
  // Twin: nothing is made where nothing is protected.
  fs::remove_all(root_ / "ws/.github");
  plan_.absent_protected.clear();
  plan_.argv = {"/bin/sh", "-c", "test ! -e .github"};
  EXPECT_EQ(MustRun().exit_code, 0);
}

TEST_F(SeatbeltLaunch, NetworkIsAllowedInTheProfileOnlyWhenThePlanAllowsIt) {
  EXPECT_EQ(MustRun().exit_code, 0);
  EXPECT_EQ(Record("argv").at(1).find("(allow network*)"), std::string::npos);
  plan_.enforcement.network = false;  // network allow
  plan_.seccomp.sockets = plan::SocketPolicy::kAny;
  EXPECT_EQ(MustRun().exit_code, 0);
  EXPECT_NE(Record("argv").at(1).find("(allow network*)"), std::string::npos);
}

TEST_F(SeatbeltLaunch, EnvironmentIsThePlansWithHomeAndTmpdirInThePrivateDirectory) {
  EXPECT_EQ(MustRun().exit_code, 0);
  const fs::path dir = PrivateDirSeen();
  EXPECT_EQ(dir.parent_path(), root_ / "private");
  std::vector<std::string> env = Record("env");
  // The fake's sh adds PWD and reorders the environment; the rest is what the launcher passed.
  std::erase_if(env, [](const std::string& e) { return e.starts_with("PWD="); });
  std::sort(env.begin(), env.end());
  EXPECT_EQ(env,
            (std::vector<std::string>{"HOME=" + (dir / "home").string(), "LANG=C",
                                      "PATH=/usr/bin:/bin", "TMPDIR=" + (dir / "tmp").string()}));
}

TEST_F(SeatbeltLaunch, RunsInThePlansWorkingDirectory) {
  fs::create_directories(root_ / "ws/sub");
  plan_.cwd = root_ / "ws/sub";
  EXPECT_EQ(MustRun().exit_code, 0);
  EXPECT_EQ(RecordText("cwd"), (root_ / "ws/sub").string() + "\n");
}

TEST_F(SeatbeltLaunch, PrivateDirectoryIsOwnerOnlyDuringTheRunAndRemovedAfterIt) {
  plan_.argv = {"/bin/sh", "-c",
                "echo x > \"$HOME/f\" && mkdir \"$TMPDIR/d\" && chmod 0 \"$TMPDIR/d\""};
  EXPECT_EQ(MustRun().exit_code, 0);
  EXPECT_EQ(RecordText("modes"), "700\n700\n700\n");
  const fs::path dir = PrivateDirSeen();
  ASSERT_FALSE(dir.empty());
  EXPECT_FALSE(fs::exists(dir)) << dir;
  EXPECT_TRUE(fs::is_empty(root_ / "private"));
}

TEST_F(SeatbeltLaunch, RemovingThePrivateDirectoryNeverFollowsALinkTheCommandPlanted) {
  fs::create_directories(root_ / "outside/dir");
  std::ofstream(root_ / "outside/dir/keep") << "x";
  std::ofstream(root_ / "outside/file") << "x";
  const std::string outside = (root_ / "outside").string();
  plan_.argv = {"/bin/sh", "-c",
                "ln -s '" + outside + "/dir' \"$HOME/d\" && ln -s '" + outside +
                    "/file' \"$TMPDIR/f\" && mkdir \"$HOME/sub\" && ln -s '" + outside +
                    "' \"$HOME/sub/up\""};
  EXPECT_EQ(MustRun().exit_code, 0);
  EXPECT_TRUE(fs::is_empty(root_ / "private"));  // the links went with the directory
  EXPECT_TRUE(fs::exists(root_ / "outside/dir/keep"));
  EXPECT_TRUE(fs::exists(root_ / "outside/file"));
}

TEST_F(SeatbeltLaunch, OnlyStdioReachesSandboxExecAndTheCommand) {
  // An inheritable descriptor of the caller, numbered high so ls cannot coincide with it.
  const int opened = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(opened, 0);
  const int leaked = ::fcntl(opened, F_DUPFD, 50);
  ::close(opened);
  ASSERT_GE(leaked, 50);
  plan_.argv = {"ls", "-1", "/proc/self/fd"};
  RunResult result = MustRun();
  ::close(leaked);
  std::vector<std::string> fds;
  std::istringstream lines(result.stdout_data.data);
  for (std::string line; std::getline(lines, line);) fds.push_back(line);
  EXPECT_EQ(std::count(fds.begin(), fds.end(), std::to_string(leaked)), 0)
      << result.stdout_data.data;
  for (const char* fd : {"0", "1", "2"}) EXPECT_EQ(std::count(fds.begin(), fds.end(), fd), 1) << fd;
}

TEST_F(SeatbeltLaunch, ExitStatusOfTheCommandPassesThrough) {
  plan_.argv = {"/bin/sh", "-c", "exit 7"};
  RunResult failed = MustRun();
  EXPECT_EQ(failed.status, RunStatus::kExited);
  EXPECT_EQ(failed.exit_code, 7);
  plan_.argv = {"/bin/sh", "-c", "exit 0"};
  EXPECT_EQ(MustRun().exit_code, 0);
}

TEST_F(SeatbeltLaunch, TimeoutKillsTheWholeProcessGroup) {
  const fs::path pid_file = root_ / "ws/grandchild";
  plan_.argv = {"/bin/sh", "-c", "sleep 100 & echo $! > " + pid_file.string() + "; wait"};
  RunResult result = MustRun(std::chrono::milliseconds(500));
  EXPECT_EQ(result.status, RunStatus::kTimedOut);
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(exec::testing::ProcessGone(grandchild));
  EXPECT_TRUE(fs::is_empty(root_ / "private"));  // removed after the kill too
}

TEST_F(SeatbeltLaunch, MissingSandboxExecIsASetupErrorAndLeavesNothingBehind) {
  options_.sandbox_exec = root_ / "no-such-sandbox-exec";
  Result<exec::CommandPipes> pipes = exec::CreateCommandPipes();
  ASSERT_TRUE(pipes.has_value());
  Result<exec::LaunchedProcess> launched = Launch(plan_, exec::MakeStdio(*pipes, 0), options_);
  ASSERT_FALSE(launched.has_value());
  EXPECT_EQ(launched.error().code, ErrorCode::kNotFound);
  EXPECT_NE(launched.error().message.find("no-such-sandbox-exec"), std::string::npos)
      << launched.error().message;
  EXPECT_TRUE(fs::is_empty(root_ / "private"));
}

TEST_F(SeatbeltLaunch, RelativeSandboxExecIsRefusedBeforeAnythingRuns) {
  options_.sandbox_exec = "sandbox-exec";  // would be looked up in a PATH
  Result<exec::CommandPipes> pipes = exec::CreateCommandPipes();
  ASSERT_TRUE(pipes.has_value());
  Result<exec::LaunchedProcess> launched = Launch(plan_, exec::MakeStdio(*pipes, 0), options_);
  ASSERT_FALSE(launched.has_value());
  EXPECT_EQ(launched.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(root_ / "record/argv"));
}

}  // namespace
}  // namespace cordon::seatbelt
