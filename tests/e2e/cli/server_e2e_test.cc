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

#include "cli_fixture.h"

namespace cordon::e2e {
namespace {

using namespace std::chrono_literals;

// A process started in the background with stdout and stderr into a file.
class Background {
 public:
  Background(const Invocation& inv, const std::filesystem::path& log) {
    std::vector<char*> argv, envp;
    for (const auto& a : inv.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : inv.env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0 || null < 0) _exit(127);
      ::dup2(null, 0);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      if (!inv.cwd.empty() && ::chdir(inv.cwd.c_str()) != 0) _exit(127);
      ::execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
  }
  ~Background() { Stop(SIGKILL); }
  // Already reaped by the test: nothing to stop.
  void Forget() { pid_ = -1; }
  pid_t pid() const { return pid_; }
  // Signals it and reaps it; its exit code (128+N for signal N).
  int Stop(int signal) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

// Processes of the machine whose command line is exactly `argv0 argv1` (a unique marker).
int CountProcesses(const std::string& argv0, const std::string& argv1) {
  const std::string wanted = argv0 + '\0' + argv1 + '\0';
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + entry->d_name + "/cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), {});
    if (cmdline == wanted) ++count;
  }
  ::closedir(proc);
  return count;
}

// A prlimit flag that gives a command another soft limit of open files than this process's.
std::string OtherFileLimit() {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  return "--nofile=" + std::to_string(files.rlim_cur - 1) + ":" + std::to_string(files.rlim_max);
}

// Whether every thread of `pid` is stopped (state T): SIGSTOP takes effect after kill()
// returns, and a worker thread that runs on for a moment could still accept a connection.
bool AllThreadsStopped(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  int threads = 0;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string stat = ReadFile(task.path() / "stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'T') {
      return false;
    }
    ++threads;
  }
  return !ec && threads > 0;
}

class ServerTest : public CliTest {
 protected:
  ServerTest() : runtime_(workspace_ / "rt") {
    std::filesystem::create_directories(runtime_);
    std::filesystem::permissions(runtime_, std::filesystem::perms::owner_all);
  }

  // The cordon binary where a sandboxed command can run it: the build tree may lie below
  // /tmp, which the sandbox replaces (its executables are static: copies are enough).
  std::string CordonInWorkspace() const {
    const std::filesystem::path copy = workspace_ / "staged/bin/cordon";
    if (!std::filesystem::exists(copy)) return StageCordon(workspace_ / "staged").string();
    return copy.string();
  }

  std::filesystem::path Socket() const { return runtime_ / "cordon/run.sock"; }
  std::filesystem::path Log() const { return tmp_.path() / "server.log"; }
  std::string ServerLog() const { return ReadFile(Log()); }
  std::string RuntimeEnv() const { return "XDG_RUNTIME_DIR=" + runtime_.string(); }

  void StartServer(const std::string& idle_timeout = "60") {
    // The previous server's "listening on" is not this one's (the new one truncates the log
    // only once it runs).
    std::filesystem::remove(Log());
    server_.emplace(CordonInvocation({"serve", "--idle-timeout", idle_timeout}, {RuntimeEnv()}),
                    Log());
    // Not the socket file: a dead server's may still be there.
    ASSERT_TRUE(WaitFor([&] { return ServerLog().find("listening on") != std::string::npos; }))
        << "not listening; log: " << ServerLog();
  }

  Outcome Run(std::initializer_list<std::string> args, std::vector<std::string> env = {}) {
    env.push_back(RuntimeEnv());
    return Cordon(args, std::move(env));
  }

  std::filesystem::path runtime_;
  std::optional<Background> server_;
};

int CountOf(const std::string& text, const std::string& part) {
  int count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

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
  EXPECT_EQ(CountOf(ServerLog(), "command line resolved here"), 1) << ServerLog();
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
  EXPECT_EQ(CountOf(log, "command line resolved here"), 0) << log;
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
// either way: unnamed as malformed, named as sandboxed), and what to send: a resolved request
// (as the full cordon does) or a command line with stdin, stdout and stderr (as the front does,
// decision 0028).
constexpr const char* kHostileClient = R"(
import array, json, os, socket, struct, sys
path, workspace, target, named, kind, payload = sys.argv[1:7]
st = os.stat(workspace)
root = os.path.dirname(target)
if payload == "off":
    config, flags = {"sandbox": {"mode": "off"}}, ["--mode", "off"]
else:
    config, flags = {"sandbox": {"writable_roots": [root]}}, ["--writable-root", root]
if kind == "request":
    magic, fds = 0x31444e43, []
    body = json.dumps({"config": json.dumps(config), "workspace": workspace,
                       "workspace_dev": st.st_dev, "workspace_ino": st.st_ino,
                       "argv": ["touch", target], "cwd": workspace, "json": True,
                       "env": [], "home": "/root"}).encode()
else:
    magic, fds = 0x31494e43, [0, 1, 2]
    argv = ["cordon", "run"] + flags + ["--", "touch", target]
    body = b"".join(p.encode() + b"\0" for p in [workspace, str(len(argv))] + argv + ["PATH=/bin"])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
if named == "1":
    s.setsockopt(socket.SOL_SOCKET, 76, 1)
rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
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
  for (const char* kind : {"request", "invocation"}) {
    for (const char* named : {"1", "0"}) {
      Outcome outer =
          Run({"run", "--no-server", "--", "python3", "-c", kHostileClient, Socket().string(),
               workspace_.string(), outside.string(), named, kind, "root"});
      EXPECT_EQ(outer.exit_code, 0) << outer.err;
      EXPECT_FALSE(std::filesystem::exists(outside)) << outer.out << outer.err;
    }
  }
  // Named: refused as sandboxed. Unnamed: refused as malformed, unless the server's own
  // SO_PASSPIDFD was set before the request was sent (then it is named all the same).
  const std::string log = ServerLog();
  EXPECT_GE(CountOf(log,
                    "refused a client: the other end is not trusted: it runs with "
                    "no_new_privs"),
            1)
      << log;
  EXPECT_EQ(CountOf(log, "refused a client") + CountOf(log, "did not name its sender"), 4) << log;
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
  for (const char* kind : {"request", "invocation"}) {
    Invocation inv;
    inv.argv = {"/usr/bin/python3",
                "-c",
                kHostileClient,
                Socket().string(),
                workspace_.string(),
                outside.string(),
                "1",
                kind,
                "off"};
    inv.env = {"PATH=/usr/bin:/bin", "HOME=" + home_.string(), NoRunServer()};
    inv.cwd = workspace_;
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_FALSE(std::filesystem::exists(outside)) << kind << ": " << o.out;
  }
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
  EXPECT_EQ(CountOf(ServerLog(), "could not serve: mode off"), 1) << ServerLog();
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

// The pid of the process listening on `socket` (SO_PEERCRED of a connection to it), or -1.
pid_t ListenerPid(const std::filesystem::path& socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  ucred cred{};
  socklen_t len = sizeof cred;
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
  ::close(fd);
  return ok ? cred.pid : -1;
}

// The process whose command line is exactly `argv0 argv1`, or -1.
pid_t FindProcess(const std::string& argv0, const std::string& argv1) {
  const std::string wanted = argv0 + '\0' + argv1 + '\0';
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    if (ReadFile(entry.path() / "cmdline") == wanted) return std::stoi(name);
  }
  return -1;
}

// `pid` and its parents up to the first process, as this PID namespace sees them.
std::vector<pid_t> Ancestors(pid_t pid) {
  std::vector<pid_t> chain;
  while (pid > 0 && chain.size() < 64) {
    chain.push_back(pid);
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    pid_t parent = 0;
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("PPid:")) parent = std::stoi(line.substr(5));
    }
    pid = parent;
  }
  return chain;
}

bool Contains(const std::vector<pid_t>& pids, pid_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

// `cordon run` starting the user's run server when none listens (decision 0030).
class AutoStartTest : public ServerTest {
 protected:
  ~AutoStartTest() override {
    if (const pid_t server = ListenerPid(Socket()); server > 0) ::kill(server, SIGKILL);
  }
  std::vector<std::string> Auto() const { return {RuntimeEnv(), "CORDON_RUN_SERVER=auto"}; }

  // The process that runs `sleep <marker>` for `client`, and whether `server` is above it.
  void ExpectServedBy(const Invocation& client, pid_t server, bool served) {
    static int count = 0;  // and this process's pid: unique among concurrent tests
    const std::string marker = std::to_string(::getpid()) + "." + std::to_string(++count);
    Invocation inv = client;
    inv.argv.push_back("sleep");
    inv.argv.push_back(marker);
    Background run(inv, tmp_.path() / "client.log");
    pid_t sleeper = -1;
    ASSERT_TRUE(WaitFor([&] { return (sleeper = FindProcess("sleep", marker)) > 0; }))
        << ReadFile(tmp_.path() / "client.log");
    const std::vector<pid_t> above = Ancestors(sleeper);
    EXPECT_EQ(Contains(above, server), served) << "server " << server;
    EXPECT_EQ(Contains(above, run.pid()), !served) << "client " << run.pid();
  }
};

// The first run finds no server, runs its command itself and starts one, detached (its own
// session, at /, with none of the client's descriptors); the next run's command is the
// server's. The twin: --no-server still runs its command itself.
TEST_F(AutoStartTest, TheFirstRunStartsAServerThatServesTheRunsAfterIt) {
  ASSERT_FALSE(std::filesystem::exists(Socket()));
  // Returns: the server holds no copy of its stdout and stderr, whose EOF it waits for.
  Outcome first = Cordon({"run", "--", "sh", "-c", "echo first"}, Auto());
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "first\n");
  EXPECT_EQ(first.err, "");
  pid_t server = -1;
  ASSERT_TRUE(WaitFor([&] { return (server = ListenerPid(Socket())) > 0; }));
  const std::string proc = "/proc/" + std::to_string(server);
  EXPECT_EQ(ReadFile(proc + "/cmdline"), std::string("cordon\0serve\0--idle-timeout\0"
                                                     "300\0",
                                                     32));
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/cwd"), "/");
  for (const char* fd : {"0", "1", "2"}) {
    EXPECT_EQ(std::filesystem::read_symlink(proc + "/fd/" + fd), "/dev/null") << fd;
  }
  const std::string stat_text = ReadFile(proc + "/stat");
  std::istringstream stat(stat_text.substr(stat_text.rfind(')') + 2));
  std::string state, ppid, pgrp, session;
  stat >> state >> ppid >> pgrp >> session;
  // setsid() in the process between: another session than the client's, no terminal.
  EXPECT_NE(session, std::to_string(::getsid(0)));
  std::string tty;
  stat >> tty;
  EXPECT_EQ(tty, "0");

  Invocation client = CordonInvocation({"run", "--"}, Auto());
  ExpectServedBy(client, server, true);
  Invocation no_server = CordonInvocation({"run", "--no-server", "--"}, Auto());
  ExpectServedBy(no_server, server, false);
}

// Servers started on demand for this test's runtime directory (by their environment), not
// counting the processes a server forks for its sessions (the same command line).
int ServersFor(const std::string& runtime_env) {
  const std::string cmdline = std::string(
      "cordon\0serve\0--idle-timeout\0"
      "300\0",
      32);
  std::vector<pid_t> servers;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    if (ReadFile(entry.path() / "cmdline") != cmdline) continue;
    const std::string environ = ReadFile(entry.path() / "environ");
    if (environ.find(runtime_env + '\0') != std::string::npos) servers.push_back(std::stoi(name));
  }
  return static_cast<int>(std::count_if(servers.begin(), servers.end(), [&](pid_t pid) {
    const std::vector<pid_t> up = Ancestors(pid);
    return std::none_of(up.begin() + 1, up.end(), [&](pid_t p) { return Contains(servers, p); });
  }));
}

// Runs that find no server at the same moment may each start one: the lock keeps one and the
// others exit.
TEST_F(AutoStartTest, RunsStartingServersAtOnceLeaveOne) {
  std::vector<std::unique_ptr<Background>> runs;
  for (int i = 0; i < 3; ++i) {
    runs.push_back(
        std::make_unique<Background>(CordonInvocation({"run", "--", "true"}, Auto()),
                                     tmp_.path() / ("run" + std::to_string(i) + ".log")));
  }
  for (auto& run : runs) EXPECT_EQ(run->Stop(0), 0);  // signal 0: waits for its exit
  EXPECT_TRUE(WaitFor([&] { return ListenerPid(Socket()) > 0; }));
  EXPECT_TRUE(WaitFor([&] { return ServersFor(RuntimeEnv()) == 1; }))
      << ServersFor(RuntimeEnv()) << " servers";
}

// CORDON_RUN_SERVER=use uses a server but starts none, =off uses none, and so does --no-server;
// a server's socket left by a dead one is replaced by one started on demand.
TEST_F(AutoStartTest, NoServerIsStartedWhenTheCallerDoesNotWantOne) {
  for (const auto& [setting, flag] : std::vector<std::pair<std::string, std::string>>{
           {"use", "--"}, {"off", "--"}, {"auto", "--no-server"}}) {
    Invocation inv =
        CordonInvocation({"run", flag}, {RuntimeEnv(), "CORDON_RUN_SERVER=" + setting});
    if (flag != "--") inv.argv.push_back("--");
    inv.argv.insert(inv.argv.end(), {"sh", "-c", "echo ran"});
    Outcome o = RunBinary(inv);
    EXPECT_EQ(o.exit_code, 0) << setting << " " << flag << ": " << o.err;
    EXPECT_EQ(o.out, "ran\n");
  }
  // A run that starts a server makes its directory first, before it returns.
  EXPECT_FALSE(std::filesystem::exists(runtime_ / "cordon"));

  StartServer();
  server_->Stop(SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(Socket()));  // left behind, refusing connections
  EXPECT_EQ(ListenerPid(Socket()), -1);
  Outcome o = Cordon({"run", "--", "sh", "-c", "echo ran"}, Auto());
  EXPECT_EQ(o.out, "ran\n") << o.err;
  EXPECT_TRUE(WaitFor([&] { return ListenerPid(Socket()) > 0; }));
}

// A CORDON_RUN_SERVER that is none of auto, use, off refuses the run, named, with or without a
// server listening (the server leaves that command line to the full cordon); nothing runs.
TEST_F(AutoStartTest, ABadRunServerSettingIsRefused) {
  for (const bool listening : {false, true}) {
    if (listening) StartServer();
    Outcome o =
        Cordon({"run", "--", "touch", "made"}, {RuntimeEnv(), "CORDON_RUN_SERVER=sometimes"});
    EXPECT_EQ(o.exit_code, 125) << o.err;
    EXPECT_NE(o.err.find("CORDON_RUN_SERVER=sometimes: expected auto, use or off"),
              std::string::npos)
        << o.err;
    EXPECT_FALSE(std::filesystem::exists(workspace_ / "made"));
  }
  EXPECT_EQ(CountOf(ServerLog(), "ran a command"), 0) << ServerLog();
}

TEST_F(ServerTest, ServeRejectsABadIdleTimeout) {
  Outcome serve = Run({"serve", "--idle-timeout", "0"});
  EXPECT_EQ(serve.exit_code, 125);
  EXPECT_NE(serve.err.find("--idle-timeout"), std::string::npos) << serve.err;
}

}  // namespace
}  // namespace cordon::e2e
