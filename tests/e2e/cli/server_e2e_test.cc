// `cordon serve` and `cordon run` through it (decision 0026): the same results as a run in the
// client itself, and no way in for a sandboxed process — neither as a client asking for a
// command outside its sandbox, nor as a server receiving a client's environment. The server's
// directory lies inside the workspace here, the worst case: visible and writable in the sandbox.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "server_fixture.h"

namespace cordon::e2e {
namespace {

TEST_F(ServerTest, ACommandRunsThroughTheServerWithItsOutputAndExitCode) {
  StartServer();
  Outcome served = Run({"run", "--", "sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(served.exit_code, 3) << served.err;
  EXPECT_EQ(served.out, "out\n");
  EXPECT_EQ(served.err, "err\n");
  EXPECT_EQ(CountOf(ServerLog(), "ran a command (exit code 3"), 1) << ServerLog();

  // The twin: --no-server gives the same result without the server.
  Outcome local = Run({"run", "--no-server", "--", "sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(local.exit_code, 3);
  EXPECT_EQ(local.out, "out\n");
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
}

TEST_F(ServerTest, DenialTimeoutAndJsonAreReportedAsWithoutTheServer) {
  StartServer();
  Outcome denied = Run({"run", "--", "rm", "-rf", "/"});
  EXPECT_EQ(denied.exit_code, 126);
  EXPECT_NE(denied.err.find("denied by policy"), std::string::npos) << denied.err;
  Outcome late = Run({"run", "--timeout", "1", "--", "sleep", "30"});
  EXPECT_EQ(late.exit_code, 124);
  EXPECT_NE(late.err.find("timed out after 1 s"), std::string::npos) << late.err;
  Outcome json = Run({"run", "--json", "--", "sh", "-c", "echo hi; exit 4"});
  EXPECT_EQ(json.exit_code, 4);
  const auto report = nlohmann::json::parse(json.out);
  EXPECT_EQ(report["stdout"], "hi\n");
  EXPECT_EQ(report["exit_code"], 4);
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 3) << ServerLog();
  // A denial in a session the server keeps ends before the run's gate: the front still hears
  // kAccepted first, and is answered once (not handed back to the full cordon, which would ask
  // the server a second time).
  Outcome denied_again = Run({"run", "--", "rm", "-rf", "/"});
  EXPECT_EQ(denied_again.exit_code, 126);
  EXPECT_NE(denied_again.err.find("denied by policy"), std::string::npos) << denied_again.err;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 4) << ServerLog();
}

// The caller's environment reaches the command as its own would (the config's pass list), and
// the workspace the server writes is the client's.
TEST_F(ServerTest, TheCommandWritesTheClientsWorkspaceWithTheClientsEnvironment) {
  WriteConfig(R"({"environment": {"pass": ["CORDON_E2E_PASSED"]}})");
  StartServer();
  Outcome served = Run({"run", "--", "sh", "-c", "echo \"$CORDON_E2E_PASSED\" > passed.txt"},
                       {"CORDON_E2E_PASSED=from-the-client"});
  ASSERT_EQ(served.exit_code, 0) << served.err;
  EXPECT_EQ(ReadFile(workspace_ / "passed.txt"), "from-the-client\n");
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1);
}

// The `cordon` front (decision 0028) hands its command line to the server, which resolves it
// in the front's directory and environment: the caller's own XDG_CONFIG_HOME (the server has
// another), its working directory (relative --writable-root, the command's cwd). The twin:
// --no-server resolves it in the client, with the same results and nothing served.
TEST_F(ServerTest, TheFrontsCommandLineIsResolvedWithItsOwnDirectoryAndEnvironment) {
  StartServer();
  const std::filesystem::path config_home = tmp_.path() / "caller-config";
  std::filesystem::create_directories(config_home / "cordon");
  WriteFile(config_home / "cordon/config.json",
            R"({"environment": {"pass": ["CORDON_E2E_PASSED"]}})");
  std::filesystem::create_directories(workspace_ / "sub");
  const std::filesystem::path extra = tmp_.path() / "extra";
  std::filesystem::create_directories(extra);
  for (const bool served : {true, false}) {
    Invocation inv = CordonInvocation(
        {"run", "--writable-root", "../../extra", "--", "sh", "-c",
         "pwd; echo \"$CORDON_E2E_PASSED\"; echo w > ../../extra/landed"},
        {RuntimeEnv(), "XDG_CONFIG_HOME=" + config_home.string(), "CORDON_E2E_PASSED=the-callers"});
    if (!served) inv.argv.insert(inv.argv.begin() + 2, "--no-server");  // after "run"
    inv.cwd = workspace_ / "sub";
    std::filesystem::remove(extra / "landed");
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.out, (workspace_ / "sub").string() + "\nthe-callers\n") << served;
    EXPECT_TRUE(std::filesystem::exists(extra / "landed")) << served;
  }
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
}

// One protocol (wire.h): the full cordon hands the server its command line, directory and
// environment exactly as the front does, and the server resolves them the same way — here a
// root option before `run` (which the front leaves to the full cordon) and a relative
// --workspace, opened through the caller's directory. The twin: --no-server runs the same
// command line in the client, with the same output, and nothing is served.
TEST_F(ServerTest, TheFullCordonHandsOverItsCommandLineAsTheFrontDoes) {
  StartServer();
  const std::filesystem::path config = tmp_.path() / "explicit.json";
  WriteFile(config, R"({"environment": {"pass": ["CORDON_E2E_PASSED"]}})");
  std::filesystem::create_directories(workspace_ / "sub");
  int served = 0;
  for (const bool full : {false, true}) {
    for (const bool no_server : {false, true}) {
      Invocation inv = CordonInvocation({"--config", config.string(), "run", "-w", "sub", "--",
                                         "sh", "-c", "pwd; echo \"$CORDON_E2E_PASSED\""},
                                        {RuntimeEnv(), "CORDON_E2E_PASSED=the-callers"});
      if (no_server) inv.argv.insert(inv.argv.begin() + 4, "--no-server");  // after "run"
      if (full) inv.argv[0] = FullCordonOf(inv.argv[0]).string();
      inv.cwd = workspace_;
      Outcome o = RunBinary(inv);
      EXPECT_EQ(o.exit_code, 0) << o.err;
      EXPECT_EQ(o.out, (workspace_ / "sub").string() + "\nthe-callers\n") << full << no_server;
      if (!no_server) ++served;
      EXPECT_EQ(CountOf(ServerLog(), "ran a command"), served) << full << no_server << ServerLog();
    }
  }
}

// What the server does not run as it stands (here mode off, whose warning belongs to the
// client; a bad flag, whose message does) the front leaves to the full cordon: the same output,
// exit code and warnings as without a front.
TEST_F(ServerTest, TheFrontLeavesWhatTheServerDoesNotResolveToTheFullCordon) {
  StartServer();
  Outcome off = Run({"run", "--mode", "off", "--", "sh", "-c", "echo unsandboxed"});
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out, "unsandboxed\n");
  EXPECT_NE(off.err.find("WARNING: running without a sandbox"), std::string::npos) << off.err;
  Outcome bad = Run({"run", "--mode", "sideways", "--", "true"});
  EXPECT_EQ(bad.exit_code, 125);
  EXPECT_NE(bad.err.find("sideways"), std::string::npos) << bad.err;
  const std::string log = ServerLog();
  EXPECT_EQ(CountOf(log, "left a command line to its client"), 2) << log;
  // The full cordon is told not to ask again (--no-server): it runs both itself.
  EXPECT_EQ(CountOf(log, "ran a command"), 0) << log;
}

// A command run by the server inherits the server's namespaces, cgroup, limits and
// credentials, not its caller's (decision 0030): a caller whose differ runs its command itself,
// silently — through the front (which the server tells so) and through the full cordon alike.
// A caller in another mount namespace would also see other files under the same names. The
// twin: the same command line, in the server's context, is served.
TEST_F(ServerTest, ACallerInAnotherContextRunsItsCommandItself) {
  StartServer();
  struct Variant {
    std::vector<std::string> prefix;
    bool full;  // the full cordon rather than the front
    std::string reason;
    bool needs_root;
  };
  const std::vector<Variant> variants = {
      {{"/usr/bin/prlimit", OtherFileLimit(), "--"}, false, "other resource limits", false},
      {{"/usr/bin/prlimit", OtherFileLimit(), "--"}, true, "other resource limits", false},
      {{"/usr/bin/unshare", "--mount", "--"}, false, "another mount namespace", true},
      {{"/usr/bin/unshare", "--net", "--"}, true, "another network namespace", true},
  };
  int left = 0;
  for (const Variant& v : variants) {
    if (v.needs_root && ::geteuid() != 0) continue;
    Invocation inv = CordonInvocation({"run", "--", "sh", "-c", "echo here"}, {RuntimeEnv()});
    if (v.full) inv.argv[0] = FullCordonOf(inv.argv[0]).string();
    ASSERT_FALSE(inv.argv[0].empty());
    inv.argv.insert(inv.argv.begin(), v.prefix.begin(), v.prefix.end());
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << v.reason << ": " << o.err;
    EXPECT_EQ(o.out, "here\n") << v.reason;
    EXPECT_EQ(o.err, "") << v.reason;
    ++left;
    EXPECT_EQ(CountOf(ServerLog(), "left a command to its client: it runs with " + v.reason) +
                  CountOf(ServerLog(), "left a command to its client: it runs in " + v.reason),
              v.reason == "other resource limits" ? (v.full ? 2 : 1) : 1)
        << ServerLog();
  }
  EXPECT_EQ(CountOf(ServerLog(), "left a command to its client"), left) << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
  Outcome same = Run({"run", "--", "sh", "-c", "echo here"});
  EXPECT_EQ(same.out, "here\n") << same.err;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
  // With that session kept, the server plans the next request before the caller's context is
  // judged (decision 0032): a caller of another context is still left its command, and the
  // server starts nothing for it.
  Invocation other = CordonInvocation({"run", "--", "sh", "-c", "echo here"}, {RuntimeEnv()});
  const std::vector<std::string> prefix = {"/usr/bin/prlimit", OtherFileLimit(), "--"};
  other.argv.insert(other.argv.begin(), prefix.begin(), prefix.end());
  Outcome o = RunBinary(other);
  EXPECT_EQ(o.out, "here\n") << o.err;
  EXPECT_EQ(CountOf(ServerLog(), "left a command to its client"), left + 1) << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
}

// Without /proc (a minimal chroot or container) the front finds the full cordon by the path it
// was started with (AT_EXECFN) and runs it; with /proc it reads /proc/self/exe.
TEST_F(ServerTest, TheFrontRunsTheFullCordonWithoutProc) {
  if (::geteuid() != 0) GTEST_SKIP() << "unmounting /proc in a mount namespace needs root";
  Invocation inv = CordonInvocation({"--version"});
  const std::string front = inv.argv[0];
  inv.argv = {"/usr/bin/unshare", "--mount", "/bin/sh", "-c",
              "umount -l /proc && ! test -e /proc/self && exec " + front + " --version"};
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(o.out.empty()) << o.err;
}

// A hostile client inside a sandbox: it skips every check cordon's own client makes and speaks
// the protocol itself (the socket lies in its workspace here, so its supervisor's connect
// broker connects it, with the supervisor's credentials). argv: socket path, workspace, a file
// to create outside, whether to ask the kernel to name the sender (the server must refuse
// either way: unnamed as malformed, named as sandboxed), and what to have run: a command line
// with stdin, stdout, stderr and its directory, as every cordon client sends it (wire.h).
constexpr const char* kHostileClient = R"(
import array, os, socket, struct, sys
path, workspace, target, named, payload = sys.argv[1:6]
root = os.path.dirname(target)
flags = ["--mode", "off"] if payload == "off" else ["--writable-root", root]
magic, fds = 0x31494e43, [0, 1, 2, os.open(workspace, os.O_PATH)]
argv = ["cordon", "run"] + flags + ["--", "touch", target]
env = ["PATH=/bin", "HOME=" + os.environ.get("HOME", "/")]
body = b"".join(p.encode() + b"\0" for p in [workspace, str(len(argv))] + argv + env)
s = socket.socket(socket.AF_UNIX)
s.connect(path)
if named == "1":
    s.setsockopt(socket.SOL_SOCKET, 76, 1)
rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
s.sendmsg([struct.pack("<II", magic, len(body))], rights)
s.sendall(body)
reply = b""  # to the end: the server checks the sender while it is alive
while chunk := s.recv(65536):
    reply += chunk
print(reply)
)";

// A process inside a sandbox that reaches the server's socket is refused: it cannot have a
// command run outside its sandbox (here: with a directory beside the workspace as a writable
// root, writing a file there).
TEST_F(ServerTest, ASandboxedClientIsRefused) {
  StartServer();
  // A directory beside the workspace, and a file to make in it.
  const std::filesystem::path beside = tmp_.path() / "beside";
  std::filesystem::create_directories(beside);
  const std::filesystem::path outside = beside / "escaped";
  const std::string root = beside.string();
  for (const char* named : {"1", "0"}) {
    Outcome outer = Run({"run", "--no-server", "--", "python3", "-c", kHostileClient,
                         Socket().string(), workspace_.string(), outside.string(), named, "root"});
    EXPECT_EQ(outer.exit_code, 0) << outer.err;
    EXPECT_FALSE(std::filesystem::exists(outside)) << outer.out << outer.err;
  }
  // Named: refused as sandboxed. Unnamed: refused as malformed, unless the server's own
  // SO_PASSPIDFD was set before the request was sent (then it is named all the same).
  const std::string log = ServerLog();
  EXPECT_GE(CountOf(log,
                    "refused a client: the other end is not trusted: it runs with "
                    "no_new_privs"),
            1)
      << log;
  EXPECT_EQ(CountOf(log, "refused a client") + CountOf(log, "did not name its sender"), 2) << log;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();

  // cordon's own client inside the sandbox (the front, then the full cordon it execs) does not
  // even send: the server is not in its PID namespace, so it cannot check it; it runs the
  // command itself, inside its sandbox.
  const std::string inner =
      RuntimeEnv() + " " + CordonInWorkspace() + " run -- touch " + outside.string();
  Outcome own_client = Run({"run", "--no-server", "--", "sh", "-c", inner});
  EXPECT_NE(own_client.err.find("not using the run server"), std::string::npos) << own_client.err;
  EXPECT_FALSE(std::filesystem::exists(outside));

  // The twin: the same command line from outside any sandbox is served and the file lands.
  Outcome trusted = Run({"run", "--writable-root", root, "--", "touch", outside.string()});
  EXPECT_EQ(trusted.exit_code, 0) << trusted.err;
  EXPECT_TRUE(std::filesystem::exists(outside));
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog() << trusted.err;
}

// A client that is itself more confined than the server (here no_new_privs, as another
// sandbox would set it) is refused as soon as its context is read, before its request is read,
// and still reads why (decision 0031); the twin, the same client unconfined, is served.
TEST_F(ServerTest, AMoreConfinedConnectingClientIsRefusedAtOnceAndReadsWhy) {
  if (!std::filesystem::exists("/usr/bin/setpriv")) GTEST_SKIP() << "no setpriv(1)";
  StartServer();
  const std::filesystem::path beside = tmp_.path() / "beside";
  std::filesystem::create_directories(beside);
  const std::filesystem::path outside = beside / "confined";
  for (const bool confined : {true, false}) {
    Invocation inv;
    if (confined) inv.argv = {"/usr/bin/setpriv", "--no-new-privs"};
    for (const std::string& arg :
         {std::string("/usr/bin/python3"), std::string("-c"), std::string(kHostileClient),
          Socket().string(), workspace_.string(), outside.string(), std::string("1"),
          std::string("root")}) {
      inv.argv.push_back(arg);
    }
    inv.env = {"PATH=/usr/bin:/bin", "HOME=" + home_.string(), NoRunServer()};
    inv.cwd = workspace_;
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    if (confined) {
      EXPECT_NE(o.out.find("refused this client"), std::string::npos) << o.out << o.err;
      EXPECT_NE(o.out.find("no_new_privs"), std::string::npos) << o.out;
      EXPECT_FALSE(std::filesystem::exists(outside)) << "a confined client had a command run";
      EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
    } else {
      EXPECT_TRUE(std::filesystem::exists(outside)) << o.out << o.err << ServerLog();
      EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
    }
  }
}

// A client whose request cannot be read (here a wrong magic number, the body still on its
// way) reads why and then the end of the connection, not a reset: the server takes in what it
// did not read before it closes. The twin: a well-formed request of the same client is served.
constexpr const char* kMalformedClient = R"(
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.setsockopt(socket.SOL_SOCKET, 76, 1)  # SO_PASSPIDFD: the message names its sender
s.sendall(struct.pack("<II", 0xdeadbeef, 65536) + b"x" * 65536)
s.shutdown(socket.SHUT_WR)
reply = b""
while chunk := s.recv(65536):
    reply += chunk
print(reply)
)";

TEST_F(ServerTest, AClientWithAMalformedRequestReadsWhyNotAReset) {
  StartServer();
  Invocation inv;
  inv.argv = {"/usr/bin/python3", "-c", kMalformedClient, Socket().string()};
  inv.env = {"PATH=/usr/bin:/bin", "HOME=" + home_.string(), NoRunServer()};
  inv.cwd = workspace_;
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("could not read the request"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
  // Twin: the same client process, its request well-formed, has its command run.
  const std::filesystem::path beside = tmp_.path() / "beside";
  std::filesystem::create_directories(beside);
  const std::filesystem::path made = beside / "served";
  inv.argv = {"/usr/bin/python3", "-c", kHostileClient, Socket().string(), workspace_.string(),
              made.string(),      "1",  "root"};
  o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(std::filesystem::exists(made)) << o.out << o.err << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
}

// No command runs unsandboxed in the server (decision 0030): a request for mode off, even from
// a trusted client, is refused and left to its caller — which `cordon run` never sends: it runs
// mode off itself and starts no server for it. The twin: the sandboxed request is served.
TEST_F(ServerTest, NoUnsandboxedCommandRunsInTheServer) {
  StartServer();
  const std::filesystem::path beside = tmp_.path() / "beside";
  std::filesystem::create_directories(beside);
  const std::filesystem::path outside = beside / "unsandboxed";
  Invocation inv;
  inv.argv = {"/usr/bin/python3", "-c", kHostileClient, Socket().string(), workspace_.string(),
              outside.string(),   "1",  "off"};
  inv.env = {"PATH=/usr/bin:/bin", "HOME=" + home_.string(), NoRunServer()};
  inv.cwd = workspace_;
  Outcome o = RunBinary(inv);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(std::filesystem::exists(outside)) << o.out;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), "left a command line to its client"), 1) << ServerLog();
  // cordon run itself: mode off runs in the client, and no server is started for it.
  const std::filesystem::path fresh = tmp_.path() / "fresh-runtime";
  std::filesystem::create_directories(fresh);
  std::filesystem::permissions(fresh, std::filesystem::perms::owner_all);
  Outcome off = Cordon({"run", "--mode", "off", "--", "touch", outside.string()},
                       {"XDG_RUNTIME_DIR=" + fresh.string(), "CORDON_RUN_SERVER=auto"});
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_TRUE(std::filesystem::exists(outside));
  EXPECT_FALSE(std::filesystem::exists(fresh / "cordon"));
  std::filesystem::remove(outside);
  Outcome served =
      Run({"run", "--writable-root", beside.string(), "--", "touch", outside.string()});
  EXPECT_EQ(served.exit_code, 0) << served.err;
  EXPECT_TRUE(std::filesystem::exists(outside));
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
}

// A sandboxed process posing as the server (it can write the directory here) never receives
// a request: the client checks the server, warns and runs the command itself.
TEST_F(ServerTest, AServerInsideASandboxIsNotUsed) {
  const std::filesystem::path fake_log = tmp_.path() / "fake.log";
  Background fake(
      CordonInvocation({"run", "--no-server", "--timeout", "30", "--", "env", RuntimeEnv(),
                        CordonInWorkspace(), "serve", "--idle-timeout", "20"}),
      fake_log);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(Socket()); })) << ReadFile(fake_log);
  Outcome client = Run({"run", "--", "sh", "-c", "echo ran"}, {"CORDON_E2E_SECRET=hunter2"});
  EXPECT_EQ(client.exit_code, 0) << client.err;
  EXPECT_EQ(client.out, "ran\n");
  EXPECT_NE(client.err.find("not using the run server"), std::string::npos) << client.err;
  EXPECT_NE(client.err.find("no_new_privs"), std::string::npos) << client.err;
  fake.Stop(SIGKILL);
  EXPECT_EQ(ReadFile(fake_log).find("ran a command"), std::string::npos) << ReadFile(fake_log);
}

// cordon's guarantee holds through the server: when the client is killed, even with SIGKILL,
// every process of its command dies.
TEST_F(ServerTest, KillingTheClientKillsTheCommandsWholeTree) {
  StartServer();
  const std::string marker = "4321.5";
  Background client(CordonInvocation({"run", "--", "sh", "-c",
                                      "setsid sleep " + marker + " & sleep " + marker + "; wait"},
                                     {RuntimeEnv()}),
                    tmp_.path() / "client.log");
  ASSERT_TRUE(WaitFor([&] { return CountProcesses("sleep", marker) == 2; }))
      << ReadFile(tmp_.path() / "client.log") << ServerLog();
  EXPECT_EQ(client.Stop(SIGKILL), 128 + SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return CountProcesses("sleep", marker) == 0; }))
      << CountProcesses("sleep", marker) << " still running";
}

// Nothing of cordon's stays on the host after a kill: the placeholders a served command holds
// in a workspace without .git or .mcp.json (so that the command cannot create them) are left
// behind when the server is killed while it runs, and removed by the next start of a session
// of the user — here a one-shot run in another directory. The twin: while the command runs,
// that run leaves them alone.
TEST_F(ServerTest, AKilledServersPlaceholdersGoAtTheNextStart) {
  StartServer();
  const std::filesystem::path git = workspace_ / ".git";
  const std::filesystem::path mcp = workspace_ / ".mcp.json";
  ASSERT_FALSE(std::filesystem::exists(git));
  // A command that is still running when the server is killed: its placeholders are there.
  std::thread waiting([&] { (void)Run({"run", "--", "sh", "-c", "touch started; sleep 30"}); });
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::exists(workspace_ / "started"); }))
      << ServerLog();
  EXPECT_TRUE(std::filesystem::is_directory(git)) << "no placeholder while a command runs";
  EXPECT_TRUE(std::filesystem::is_symlink(mcp)) << "no placeholder while a command runs";
  const std::filesystem::path other = tmp_.path() / "other";
  std::filesystem::create_directories(other);
  auto run_elsewhere = [&] {
    Invocation inv = CordonInvocation({"run", "--no-server", "--", "true"}, {RuntimeEnv()});
    inv.cwd = other;
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_FALSE(std::filesystem::exists(other / ".git")) << "its own placeholder stayed";
  };
  run_elsewhere();
  EXPECT_TRUE(std::filesystem::is_directory(git)) << "removed under a running command";
  server_->Stop(SIGKILL);
  waiting.join();
  // Left behind, until the next start of a cordon of this user: the server's sandboxes die
  // with it; until then they hold them.
  EXPECT_TRUE(WaitFor([&] {
    run_elsewhere();
    return !std::filesystem::exists(git) && !std::filesystem::is_symlink(mcp);
  })) << "the killed server's placeholders are still there";
}

// A server asked to stop (SIGTERM, as a service manager or `kill` does) exits like an idle
// one: its sessions end and remove their placeholders themselves, and its socket is gone.
TEST_F(ServerTest, AStoppedServerLeavesNoSocketAndNoCommandLeavesAPlaceholder) {
  StartServer();
  const std::filesystem::path git = workspace_ / ".git";
  Outcome served = Run({"run", "--", "true"});
  EXPECT_EQ(served.exit_code, 0) << served.err;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
  // Between commands nothing of the placeholders is on the host (decision 0034).
  EXPECT_FALSE(std::filesystem::exists(git)) << "a placeholder outlived its command";
  EXPECT_FALSE(std::filesystem::is_symlink(workspace_ / ".mcp.json"));
  EXPECT_EQ(server_->Stop(SIGTERM), 0) << ServerLog();
  EXPECT_FALSE(std::filesystem::exists(git)) << "left behind by a stopped server";
  EXPECT_FALSE(std::filesystem::exists(Socket()));
  EXPECT_EQ(CountOf(ServerLog(), "asked to stop"), 1) << ServerLog();
}

TEST_F(ServerTest, ADeadServersSocketMeansRunningWithoutIt) {
  StartServer();
  server_->Stop(SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(Socket()));  // left behind
  Outcome run = Run({"run", "--", "sh", "-c", "echo alone"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "alone\n");
  // No server is the ordinary case: cordon has nothing to warn about.
  EXPECT_EQ(run.err.find("cordon:"), std::string::npos) << run.err;
}

TEST_F(ServerTest, ASecondServerIsRefused) {
  StartServer();
  Outcome second = Run({"serve", "--idle-timeout", "1"});
  EXPECT_EQ(second.exit_code, 125);
  EXPECT_NE(second.err.find("another run server"), std::string::npos) << second.err;
}

// A server started from another cordon executable (still running after an upgrade, another
// install) may speak another protocol: the client does not use it, says so and runs the
// command itself. The twin: the same executable is used (the first test above).
TEST_F(ServerTest, AServerOfAnotherExecutableIsNotUsed) {
  const std::filesystem::path other = StageCordon(tmp_.path() / "other");
  Invocation inv = CordonInvocation({"serve", "--idle-timeout", "60"}, {RuntimeEnv()});
  inv.argv[0] = other.string();
  server_.emplace(inv, Log());
  ASSERT_TRUE(WaitFor([&] { return ServerLog().find("listening on") != std::string::npos; }))
      << ServerLog();
  Outcome run = Run({"run", "--", "sh", "-c", "echo mine"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "mine\n");
  EXPECT_NE(run.err.find("another cordon executable"), std::string::npos) << run.err;
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
}

// A server killed as a run connects lets go of its executable before its socket (the kernel
// releases the memory map first): the connection names no executable. It is not "another
// cordon executable" (issue 33: clients said so after a SIGKILL under load) but no server: the
// command runs here without a warning, as with a dead server's socket. Emulated by a listener
// whose process exited (not yet reaped) while a child of it keeps the socket open. Twin: the
// case above, where the executable is known and another.
TEST_F(ServerTest, AServerExitingAsARunConnectsIsNoServerNotAnotherExecutable) {
  const std::string path = Socket().string();
  ASSERT_LT(path.size(), sizeof(sockaddr_un::sun_path));
  std::filesystem::create_directories(Socket().parent_path());
  std::filesystem::permissions(Socket().parent_path(), std::filesystem::perms::owner_all);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t listener = ::fork();
  ASSERT_GE(listener, 0);
  if (listener == 0) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    const int socket = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (socket < 0 || ::bind(socket, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(socket, 8) != 0) {
      ::_exit(1);
    }
    const pid_t holder = ::fork();
    if (holder == 0) {
      const pid_t self = ::getpid();
      (void)!::write(ready[1], &self, sizeof self);
      for (;;) ::pause();
    }
    ::_exit(holder > 0 ? 0 : 1);  // the process that listened exits; its child keeps the socket
  }
  ::close(ready[1]);
  pid_t holder = -1;
  const bool held = ::read(ready[0], &holder, sizeof holder) == sizeof holder;
  ::close(ready[0]);
  siginfo_t exited{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(listener), &exited, WEXITED | WNOWAIT), 0);
  ASSERT_TRUE(held && exited.si_status == 0) << "the listener could not be set up";
  Outcome run = Run({"run", "--", "sh", "-c", "echo here"});
  ::kill(holder, SIGKILL);
  ::waitpid(listener, nullptr, 0);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "here\n");
  EXPECT_EQ(run.err.find("another cordon executable"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("cordon:"), std::string::npos) << run.err;
}

// After a load the server keeps only the sessions still used: one that ran nothing for the
// server's idle timeout is dropped (its zygote and prepared sandboxes with it) while runs in
// another workspace keep the server up. Twin: that other workspace's session is kept.
TEST_F(ServerTest, ASessionUnusedForTheIdleTimeoutIsDroppedWhileOthersRun) {
  StartServer("2");
  const std::filesystem::path other = tmp_.path() / "other";
  std::filesystem::create_directories(other);
  Outcome first = Run({"run", "--", "sh", "-c", "echo first"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string dropped = "dropped the session of ";
  for (int i = 0; i < 8 && CountOf(ServerLog(), dropped + workspace_.string()) == 0; ++i) {
    Invocation inv = CordonInvocation({"run", "--", "sh", "-c", "echo other"}, {RuntimeEnv()});
    inv.cwd = other;
    Outcome run = RunBinary(inv);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_EQ(run.out, "other\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(CountOf(ServerLog(), dropped + workspace_.string() + ":"), 1) << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), dropped + other.string() + ":"), 0) << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), "idle, exiting"), 0) << ServerLog();
  // The dropped workspace's next run is served by a session made anew.
  Outcome again = Run({"run", "--", "sh", "-c", "echo again"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "again\n");
  EXPECT_EQ(again.err, "");
}

// A stopped server greets no connection: the client hands it nothing (its stdout stays its
// own) and runs the command itself after kHelloWait.
TEST_F(ServerTest, AStoppedServerIsHandedNothing) {
  StartServer();
  ASSERT_EQ(::kill(server_->pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return AllThreadsStopped(server_->pid()); }));
  Outcome run = Run({"run", "--", "sh", "-c", "echo here"});
  ASSERT_EQ(::kill(server_->pid(), SIGCONT), 0);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "here\n");
  EXPECT_NE(run.err.find("did not take the connection within 2 s"), std::string::npos) << run.err;
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
}

// The server enforces the run's timeout itself, so a reply that has not come by then (plus
// kReplyGrace, 5 s) means it is stopped or hung: the client gives up with 125, and its exit
// cancels the command's whole tree as soon as the server runs again. The twin (a working
// server, a command that outlives its timeout) is the 124 above.
TEST_F(ServerTest, AServerStoppedDuringARunIsGivenUpOn) {
  StartServer();
  const std::string marker = "30.25";  // sleep's argument: this test's command, nobody else's
  Background client(
      CordonInvocation({"run", "--timeout", "1", "--", "sleep", marker}, {RuntimeEnv()}),
      tmp_.path() / "client.log");
  ASSERT_TRUE(WaitFor([&] { return CountProcesses("sleep", marker) == 1; })) << ServerLog();
  ASSERT_EQ(::kill(server_->pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return AllThreadsStopped(server_->pid()); }));
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(client.pid(), &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - start < 20s) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(::kill(server_->pid(), SIGCONT), 0);
  ASSERT_EQ(done, client.pid()) << "the client still waits after 20 s";
  client.Forget();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 125) << status;
  const std::string log = ReadFile(tmp_.path() / "client.log");
  EXPECT_NE(log.find("did not answer within 6 s"), std::string::npos) << log;
  EXPECT_TRUE(WaitFor([&] { return CountProcesses("sleep", marker) == 0; }))
      << "the command outlived its client";
}

// A stopped server's backlog fills up; a client then finds no room and runs its command itself
// (connect() does not block it), saying why.
TEST_F(ServerTest, AFullBacklogMeansRunningWithoutTheServer) {
  StartServer();
  ASSERT_EQ(::kill(server_->pid(), SIGSTOP), 0);
  ASSERT_TRUE(WaitFor([&] { return AllThreadsStopped(server_->pid()); }));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, Socket().c_str(), sizeof address.sun_path - 1);
  std::vector<int> held;
  for (int i = 0; i < 1000; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    held.push_back(fd);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) break;
  }
  ASSERT_LT(held.size(), 1000u) << "the backlog never filled";
  Outcome run = Run({"run", "--", "sh", "-c", "echo here"});
  for (int fd : held) ::close(fd);
  ASSERT_EQ(::kill(server_->pid(), SIGCONT), 0);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "here\n");
  EXPECT_NE(run.err.find("accepts no connection"), std::string::npos) << run.err;
}

// The lock is shared with every process cloned from a server until it execs: the children of a
// server that was just killed can hold it for a moment. The next server waits that out (the
// twin above: a lock held for good refuses it).
TEST_F(ServerTest, ALockReleasedSoonAfterIsTakenOver) {
  std::filesystem::create_directories(runtime_ / "cordon");
  ::chmod((runtime_ / "cordon").c_str(), 0700);
  const std::filesystem::path lock = runtime_ / "cordon/server.lock";
  const int held = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  server_.emplace(CordonInvocation({"serve", "--idle-timeout", "60"}, {RuntimeEnv()}), Log());
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(ServerLog().find("listening on"), std::string::npos) << ServerLog();
  ::close(held);
  ASSERT_TRUE(WaitFor([&] { return ServerLog().find("listening on") != std::string::npos; }))
      << ServerLog();
  Outcome run = Run({"run", "--", "sh", "-c", "echo served"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "served\n");
  EXPECT_TRUE(WaitFor([&] { return ServerLog().find("ran a command") != std::string::npos; }))
      << ServerLog();
}

TEST_F(ServerTest, ADirectoryOthersCanEnterIsRefusedByBothSides) {
  std::filesystem::create_directories(runtime_ / "cordon");
  ::chmod((runtime_ / "cordon").c_str(), 0755);
  Outcome serve = Run({"serve", "--idle-timeout", "1"});
  EXPECT_EQ(serve.exit_code, 125);
  EXPECT_NE(serve.err.find("chmod 700"), std::string::npos) << serve.err;
  Outcome run = Run({"run", "--", "sh", "-c", "echo still"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, "still\n");
  EXPECT_NE(run.err.find("others must have no access"), std::string::npos) << run.err;
}

// Only a command it ran keeps a server from its idle exit (decision 0030): callers it leaves
// their commands to (here: other resource limits) do not, so a server that none of its callers
// can use makes way for one of theirs. The twin: served runs at the same pace keep it.
TEST_F(ServerTest, OnlyCommandsItRunsKeepTheServerFromItsIdleExit) {
  for (const bool served : {false, true}) {
    StartServer("3");
    const auto end = std::chrono::steady_clock::now() + 5s;
    int runs = 0;
    while (std::chrono::steady_clock::now() < end) {
      Invocation inv = CordonInvocation({"run", "--", "true"}, {RuntimeEnv()});
      if (!served) inv.argv.insert(inv.argv.begin(), {"/usr/bin/prlimit", OtherFileLimit(), "--"});
      EXPECT_EQ(RunBinary(inv).exit_code, 0);
      ++runs;
      std::this_thread::sleep_for(300ms);
    }
    const std::string log = ServerLog();
    EXPECT_EQ(CountOf(log, "ran a command"), served ? runs : 0) << log;
    EXPECT_EQ(CountOf(log, "idle, exiting"), served ? 0 : 1) << log;
    server_->Stop(SIGKILL);
  }
}

TEST_F(ServerTest, ServeRejectsABadIdleTimeout) {
  // Zero, a fraction (0.5 s would drop every session at once), past a week, not a number.
  for (const char* bad : {"0", "0.5", "1.5", "604801", "1e300", "nan"}) {
    Outcome serve = Run({"serve", "--idle-timeout", bad});
    EXPECT_EQ(serve.exit_code, 125) << bad;
    EXPECT_NE(serve.err.find("--idle-timeout"), std::string::npos) << bad << ": " << serve.err;
  }
  // Twin: whole seconds within the bounds start a server.
  StartServer("604800");
  Outcome run = Run({"run", "--", "sh", "-c", "echo served"});
  EXPECT_EQ(run.out, "served\n");
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 1) << ServerLog();
}

}  // namespace
}  // namespace cordon::e2e
