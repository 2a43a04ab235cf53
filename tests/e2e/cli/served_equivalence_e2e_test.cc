// One sandbox, not two (issue 23): each attack that got further through the run server than
// through a one-shot run, tried both ways from outside, with the same expectations. The served
// runs go through a server the test starts (and are counted in its log); the one-shot twins
// pass --no-server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "policy/shell_quote.h"
#include "server_fixture.h"

namespace cordon::e2e {
namespace {

class ServedEquivalence : public ServerTest {
 protected:
  // `cordon run [--no-server] ARGS…` in `cwd` (the workspace when empty).
  Outcome RunWay(bool served, const std::vector<std::string>& args,
                 std::vector<std::string> env = {}, const std::filesystem::path& cwd = {},
                 const std::string& stdin_data = {}) {
    env.push_back(RuntimeEnv());
    Invocation inv = CordonInvocation({"run"}, std::move(env));
    if (!served) inv.argv.push_back("--no-server");
    inv.argv.insert(inv.argv.end(), args.begin(), args.end());
    if (!cwd.empty()) inv.cwd = cwd;
    inv.stdin_data = stdin_data;
    return RunBinary(inv);
  }
  int Served() const { return CountOf(ServerLog(), "ran a command"); }
  static const char* Way(bool served) { return served ? "served" : "one-shot"; }
};

// Item 1: a hidden file saved atomically on the host (a new file renamed over it) while the
// server's session lives stays hidden: the session's prepared sandboxes were masked over the
// old file, whose masks the kernel detached.
TEST_F(ServedEquivalence, AHiddenFileSavedOnTheHostStaysHidden) {
  const std::filesystem::path secret = std::filesystem::canonical(workspace_) / "app.env";
  WriteFile(secret, "TOKEN=first\n");
  WriteConfig(R"({"sandbox": {"hidden_paths": [")" + secret.string() + R"("]}})");
  StartServer();
  for (bool served : {true, false}) {
    WriteFile(workspace_ / "plain", "plain0\n");
    for (int i = 0; i < 3; ++i) {
      const int before = Served();
      const Outcome read = RunWay(served, {"--", "sh", "-c", "cat app.env; cat plain; echo end"});
      EXPECT_EQ(read.out, "plain" + std::to_string(i) + "\nend\n") << Way(served) << read.err;
      EXPECT_EQ(Served(), before + (served ? 1 : 0)) << ServerLog();
      // The next save, and a file beside it saved the same way (the twin: read as it is).
      WriteFile(workspace_ / "app.env.new", "TOKEN=saved" + std::to_string(i) + "\n");
      std::filesystem::rename(workspace_ / "app.env.new", secret);
      WriteFile(workspace_ / "plain.new", "plain" + std::to_string(i + 1) + "\n");
      std::filesystem::rename(workspace_ / "plain.new", workspace_ / "plain");
    }
  }
}

// Output into a pipe of the caller's is the command's own write (decision 0047), served and
// one-shot alike, as a user's shell pipeline sees it: the reader's stdin is the very pipe the
// command's stdout is. Twin: redirected into a file, the command writes a pipe of cordon's.
TEST_F(ServedEquivalence, OutputIntoAPipeIsTheCommandsOwnWrite) {
  StartServer();
  const std::filesystem::path file = std::filesystem::canonical(tmp_.path()) / "out.txt";
  for (bool served : {true, false}) {
    Invocation inv = CordonInvocation({"run"}, {RuntimeEnv()});
    if (!served) inv.argv.push_back("--no-server");
    const std::string cordon =
        policy::ShellQuote(inv.argv) + " -- sh -c 'stat -L -c %i /proc/self/fd/1'";
    const int before = Served();
    inv.argv = {"/bin/sh", "-c", cordon + " | { stat -L -c %i /proc/self/fd/0; cat; }"};
    const Outcome piped = RunBinary(inv);
    ASSERT_EQ(piped.exit_code, 0) << Way(served) << piped.err;
    const std::size_t newline = piped.out.find('\n');
    ASSERT_NE(newline, std::string::npos) << piped.out;
    EXPECT_EQ(piped.out.substr(newline + 1), piped.out.substr(0, newline + 1)) << Way(served);
    EXPECT_EQ(Served(), before + (served ? 1 : 0)) << ServerLog();
    inv.argv = {"/bin/sh", "-c",
                cordon + " > '" + file.string() + "'; stat -L -c %i '" + file.string() + "'"};
    const Outcome redirected = RunBinary(inv);
    ASSERT_EQ(redirected.exit_code, 0) << Way(served) << redirected.err;
    EXPECT_NE(ReadFile(file), redirected.out) << Way(served);
    EXPECT_FALSE(ReadFile(file).empty()) << Way(served);
  }
}

// Real work (issue 30): what the caller pipes or redirects into `cordon run` reaches the
// command, served and one-shot alike — data for a reader, a script for a shell that reads it
// (`sh -s`, `python3 - <<EOF`), a file. The twin: with --no-stdin the command reads nothing.
TEST_F(ServedEquivalence, WhatTheCallerPipesInReachesTheCommand) {
  StartServer();
  const std::filesystem::path input = std::filesystem::canonical(tmp_.path()) / "input.json";
  WriteFile(input, "{\"a\": 1}\n");
  for (bool served : {true, false}) {
    const int before = Served();
    const Outcome data =
        RunWay(served, {"--", "python3", "-c", "import json,sys; print(json.load(sys.stdin)['a'])"},
               {}, {}, "{\"a\": 2}\n");
    EXPECT_EQ(data.out, "2\n") << Way(served) << data.err;
    EXPECT_EQ(data.exit_code, 0) << Way(served) << data.err;
    const Outcome script = RunWay(served, {"--", "sh", "-s"}, {}, {}, "echo from a script\n");
    EXPECT_EQ(script.out, "from a script\n") << Way(served) << script.err;
    const Outcome none = RunWay(served, {"--no-stdin", "--", "cat"}, {}, {}, "not for cat\n");
    EXPECT_EQ(none.out, "") << Way(served) << none.err;
    EXPECT_EQ(none.exit_code, 0) << Way(served) << none.err;
    Invocation file = CordonInvocation({}, {RuntimeEnv()});
    const std::string cordon = file.argv.front();
    file.argv = {
        "/bin/sh", "-c",
        std::string("exec \"$0\" run ") + (served ? "" : "--no-server ") + "-- cat < \"$1\"",
        cordon, input.string()};
    const Outcome from_file = RunBinary(file);
    EXPECT_EQ(from_file.out, "{\"a\": 1}\n") << Way(served) << from_file.err;
    EXPECT_EQ(Served(), before + (served ? 4 : 0)) << ServerLog();
  }
}

// Item 2: the caller's directory goes to the server as a descriptor, and every later step
// (session, plan, the bind in the child) is pinned to that directory. A host process swaps the
// caller's directory for a link to another one, half of the time, while a shell that sits in
// it runs served commands that write a file each: none may land in the link's target (before:
// about one run in six did). Each run lands in the caller's own directory or is refused.
constexpr const char* kSwapper = R"(
import os, sys, time
child, real, target, stop = sys.argv[1:5]
deadline = time.time() + 120
while not os.path.exists(stop) and time.time() < deadline:
    os.rename(child, real)
    os.symlink(target, child)
    time.sleep(0.0004)
    os.unlink(child)
    os.rename(real, child)
    time.sleep(0.0004)
)";

TEST_F(ServedEquivalence, ADirectorySwappedForALinkDuringServedRunsIsNeverTheWorkspace) {
  StartServer();
  const std::filesystem::path parent = std::filesystem::canonical(workspace_);
  const std::filesystem::path child = parent / "child";
  const std::filesystem::path target = std::filesystem::canonical(tmp_.path()) / "target";
  std::filesystem::create_directories(child);
  std::filesystem::create_directories(target);
  constexpr int kRuns = 500;
  // The shell enters the directory before the swapping starts: it is in the real one.
  Invocation victim = CordonInvocation({}, {RuntimeEnv()});
  victim.cwd = child;
  victim.argv = {"/bin/bash", "-c",
                 "sleep 0.3; for i in $(seq 1 " + std::to_string(kRuns) + "); do " +
                     CordonBinary() + " run -- touch f$i 2>>../victim.err; done"};
  const std::filesystem::path stop = parent / "stop";
  Invocation swap_inv = CordonInvocation({}, {});
  swap_inv.argv = {
      "/usr/bin/python3", "-c",         kSwapper, child.string(), (parent / "child.real").string(),
      target.string(),    stop.string()};
  Background swapper(swap_inv, tmp_.path() / "swapper.log");
  const Outcome ran = RunBinary(victim);
  WriteFile(stop, "");
  EXPECT_EQ(swapper.Stop(0), 0) << ReadFile(tmp_.path() / "swapper.log");
  std::size_t in_target = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(target)) {
    ++in_target;
  }
  EXPECT_EQ(in_target, 0u) << "runs wrote into the link's target";
  std::size_t in_child = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(child)) {
    ++in_child;
  }
  // The twin: runs that met the name in place went through, served and not; the others
  // (most, with the link there half of the time and several look-ups per run) were refused.
  EXPECT_GT(in_child, 0u) << ReadFile(parent / "victim.err");
  EXPECT_GT(Served(), 0) << ServerLog();
  // Without the swapping, every run lands, served.
  const int served_before = Served();
  Invocation calm = victim;
  calm.argv = {"/bin/bash", "-c",
               "for i in 1 2 3; do " + CordonBinary() + " run -- touch calm$i || exit 1; done"};
  const Outcome quiet = RunBinary(calm);
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_TRUE(std::filesystem::exists(child / "calm3"));
  EXPECT_EQ(Served(), served_before + 3)
      << quiet.err << ServerLog().substr(ServerLog().size() > 3000 ? ServerLog().size() - 3000 : 0);
}

// Item 3: the config that is read is out of reach wherever XDG_CONFIG_HOME puts it: inside a
// writable root (absent: the command could create it; present: rewrite it) the run is refused
// before anything runs; outside, it is hidden.
TEST_F(ServedEquivalence, TheConfigThatIsReadCannotBeWrittenByTheCommand) {
  StartServer();
  const std::filesystem::path xdg = std::filesystem::canonical(workspace_) / "xdg";
  const std::string env = "XDG_CONFIG_HOME=" + xdg.string();
  const std::string plant =
      R"(mkdir -p xdg/cordon && echo '{"sandbox": {"mode": "off"}}' > xdg/cordon/config.json)";
  for (bool served : {true, false}) {
    const Outcome refused = RunWay(served, {"--", "sh", "-c", plant}, {env});
    EXPECT_EQ(refused.exit_code, 125) << Way(served) << refused.err;
    EXPECT_NE(refused.err.find("config"), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(xdg / "cordon/config.json")) << Way(served);
  }
  std::filesystem::create_directories(xdg / "cordon");
  WriteFile(xdg / "cordon/config.json", "{}\n");
  for (bool served : {true, false}) {
    const Outcome refused = RunWay(served, {"--", "sh", "-c", plant}, {env});
    EXPECT_EQ(refused.exit_code, 125) << Way(served) << refused.err;
    EXPECT_NE(refused.err.find("cordon's own config"), std::string::npos) << refused.err;
    EXPECT_EQ(ReadFile(xdg / "cordon/config.json"), "{}\n") << Way(served) << refused.err;
  }
  // Twin: the same config outside the workspace is read, and the command runs.
  const std::filesystem::path elsewhere = std::filesystem::canonical(tmp_.path()) / "xdg";
  std::filesystem::create_directories(elsewhere / "cordon");
  WriteFile(elsewhere / "cordon/config.json", R"({"environment": {"pass": ["CORDON_E2E_X"]}})");
  for (bool served : {true, false}) {
    const Outcome ran = RunWay(served, {"--", "sh", "-c", "echo \"$CORDON_E2E_X\" > twin"},
                               {"XDG_CONFIG_HOME=" + elsewhere.string(), "CORDON_E2E_X=read"});
    EXPECT_EQ(ran.exit_code, 0) << Way(served) << ran.err;
    EXPECT_EQ(ReadFile(workspace_ / "twin"), "read\n") << Way(served);
    std::filesystem::remove(workspace_ / "twin");
  }
}

// Item 4, across sessions: a configured writable root in the workspace that a command turned
// into a link to a directory outside must not make the next run bind that directory writable
// (before: every new session followed the link, one-shot too). A kept session refuses the
// changed root; a new one refuses the link a command could have made.
TEST_F(ServedEquivalence, AWritableRootACommandTurnedIntoALinkIsRefusedByTheNextRun) {
  const std::filesystem::path ws = std::filesystem::canonical(workspace_);
  const std::filesystem::path outside = std::filesystem::canonical(tmp_.path()) / "outside";
  std::filesystem::create_directory(outside);
  WriteConfig(R"({"sandbox": {"writable_roots": [")" + (ws / "cache").string() + R"("]}})");
  StartServer();
  for (bool served : {true, false}) {
    std::filesystem::create_directory(ws / "cache");
    // Twin: the root as configured is writable.
    const Outcome twin = RunWay(served, {"--", "sh", "-c", "echo x > cache/made"});
    EXPECT_EQ(twin.exit_code, 0) << Way(served) << twin.err;
    EXPECT_TRUE(std::filesystem::exists(ws / "cache/made")) << Way(served);
    const Outcome swap = RunWay(
        served, {"--", "sh", "-c", "mv cache cache.old && ln -s '" + outside.string() + "' cache"});
    ASSERT_EQ(swap.exit_code, 0) << Way(served) << swap.err;
    const Outcome next =
        RunWay(served, {"--", "sh", "-c", "echo x > '" + (outside / "planted").string() + "'"});
    EXPECT_EQ(next.exit_code, 125) << Way(served) << next.err;
    EXPECT_TRUE(next.err.find("a symbolic link inside") != std::string::npos ||
                next.err.find("no longer what this session started with") != std::string::npos)
        << Way(served) << next.err;
    EXPECT_FALSE(std::filesystem::exists(outside / "planted")) << Way(served);
    std::filesystem::remove(ws / "cache");
    std::filesystem::remove_all(ws / "cache.old");
  }
}

// Item 5: a run the plan refuses leaves nothing on the host (a workspace that is the home: the
// .git placeholder was once made before the refusal).
TEST_F(ServedEquivalence, ARefusedRunLeavesNothingOnTheHost) {
  StartServer();
  for (bool served : {true, false}) {
    const Outcome refused = RunWay(served, {"--", "true"}, {}, home_);
    EXPECT_EQ(refused.exit_code, 125) << Way(served) << refused.err;
    EXPECT_NE(refused.err.find("home directory"), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(home_ / ".git")) << Way(served);
  }
  // Twin: an accepted run in a workspace without .git holds its placeholder there.
  const Outcome ran = RunWay(true, {"--", "true"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
}

// Item 6: a workspace that is the host's /var/tmp is the host's in every served command too
// (each command's fresh private tmpfs went over it: empty, writes lost, exit 0).
TEST_F(ServedEquivalence, AWorkspaceThatIsVarTmpIsTheHosts) {
  const std::filesystem::path var_tmp = std::filesystem::canonical("/var/tmp");
  const std::string tag = tmp_.path().filename().string();
  const std::filesystem::path planted = var_tmp / ("cordon-planted-" + tag);
  const std::filesystem::path written = var_tmp / ("cordon-written-" + tag);
  WriteFile(planted, "planted\n");
  StartServer();
  for (bool served : {true, false}) {
    for (int i = 0; i < 3; ++i) {
      const std::string text = "cat " + planted.filename().string() + " && echo " +
                               std::to_string(i) + " > " + written.filename().string();
      const Outcome run = RunWay(served, {"--", "sh", "-c", text}, {}, var_tmp);
      EXPECT_EQ(run.exit_code, 0) << Way(served) << run.err;
      EXPECT_EQ(run.out, "planted\n") << Way(served);
      EXPECT_EQ(ReadFile(written), std::to_string(i) + "\n") << Way(served);
    }
  }
  std::filesystem::remove(planted);
  std::filesystem::remove(written);
}

// Item 7: `cordon run -- yes | head` ends as soon as head does, with SIGPIPE (141), served as
// one-shot; not at its timeout.
TEST_F(ServedEquivalence, ACommandWhoseReaderIsGoneEndsBySigpipe) {
  StartServer();
  for (bool served : {true, false}) {
    const int before = Served();
    Invocation inv = CordonInvocation({}, {RuntimeEnv()});
    const std::string cordon = CordonBinary() + (served ? " run" : " run --no-server");
    inv.argv = {"/bin/bash", "-c",
                cordon + " --timeout 20 -- yes | head -n 2; echo \"status=${PIPESTATUS[0]}\""};
    const auto start = std::chrono::steady_clock::now();
    const Outcome piped = RunBinary(inv);
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(piped.out, "y\ny\nstatus=141\n") << Way(served) << piped.err;
    EXPECT_LT(took, std::chrono::seconds(15)) << Way(served);
    EXPECT_EQ(Served(), before + (served ? 1 : 0)) << ServerLog();
  }
}

// Item 8: a command that changes the terminal's settings (stty -echo) leaves them as they
// were once it ended, served and one-shot. The caller runs on a pseudo-terminal of its own
// (its controlling terminal, in the foreground); the settings are read from outside after.
constexpr const char* kOnTerminal = R"(
import os, pty, sys, termios
pid, master = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
while True:
    try:
        if not os.read(master, 4096):
            break
    except OSError:
        break
_, status = os.waitpid(pid, 0)
echo = termios.tcgetattr(master)[3] & termios.ECHO
print("echo=%d exit=%d" % (1 if echo else 0, os.waitstatus_to_exitcode(status)))
)";

TEST_F(ServedEquivalence, TheTerminalsSettingsAreRestoredAfterTheCommand) {
  StartServer();
  auto on_terminal = [&](std::vector<std::string> argv) {
    Invocation inv = CordonInvocation({}, {RuntimeEnv()});
    inv.argv = {"/usr/bin/python3", "-c", kOnTerminal};
    inv.argv.insert(inv.argv.end(), argv.begin(), argv.end());
    return RunBinary(inv);
  };
  // The probe can tell: stty run directly on the terminal leaves echo off.
  const Outcome direct = on_terminal({"/bin/stty", "-echo"});
  EXPECT_EQ(direct.out, "echo=0 exit=0\n") << direct.err;
  for (bool served : {true, false}) {
    const int before = Served();
    std::vector<std::string> argv = {CordonBinary(), "run"};
    if (!served) argv.push_back("--no-server");
    argv.insert(argv.end(), {"--", "sh", "-c", "stty -echo && exit 3"});
    const Outcome changed = on_terminal(argv);
    EXPECT_EQ(changed.out, "echo=1 exit=3\n") << Way(served) << changed.err;
    EXPECT_EQ(Served(), before + (served ? 1 : 0)) << ServerLog();
  }
}

}  // namespace
}  // namespace cordon::e2e
