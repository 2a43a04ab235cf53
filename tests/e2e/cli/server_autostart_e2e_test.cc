// `cordon run` starting the user's run server on demand (decision 0030): detached, serving the
// next run's command, not started when the caller does not want one, one left when several
// start at once.
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

}  // namespace
}  // namespace cordon::e2e
