// The Landlock-only fallback (no namespaces). Plan does not produce such plans yet (issue 4
// decides what the fallback refuses), so these tests strip a namespaced plan by hand into the
// shape a fallback plan has, and check what Launch then enforces from outside.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "linux/system_headers/landlock.h"
#include "sandbox_runner.h"

namespace cordon::testing {
namespace {

namespace lsys = linux_native::sys;

#define CORDON_REQUIRE_FALLBACK()                                        \
  do {                                                                   \
    CORDON_REQUIRE_NATIVE_SANDBOX();                                     \
    if (Features().landlock_abi < 4) GTEST_SKIP() << "Landlock ABI < 4"; \
  } while (0)

plan::LaunchPlan FallbackPlan(const std::filesystem::path& workspace,
                              std::vector<std::string> argv) {
  plan::PlanRequest request;
  request.argv = std::move(argv);
  request.workspace = workspace;
  request.caller_env = {"PATH=/usr/bin:/bin"};
  Config config;
  auto planned = plan::Plan(config, Features(), request);
  EXPECT_TRUE(planned) << planned.error().message;
  plan::LaunchPlan p = *planned;
  p.namespaces = {};
  p.mounts.clear();
  p.landlock.writable = {workspace, "/dev"};
  p.landlock.handled_net = lsys::kAccessNetBindTcp | lsys::kAccessNetConnectTcp;
  p.seccomp.sockets = plan::SocketPolicy::kUnixAndNetlink;
  return p;
}

std::string Line(const Result<ProbeRun>& run) {
  return run ? run->line() : "launch failed: " + run.error().message;
}

TEST(LandlockFallback, WritesLandOnlyInTheWorkspace) {
  CORDON_REQUIRE_FALLBACK();
  TempDir workspace;
  TempDir outside;
  EXPECT_EQ(Line(RunPlan(FallbackPlan(workspace.path(),
                                      {"probe", "write", (workspace.path() / "in").string()}))),
            "ok");
  EXPECT_TRUE(std::filesystem::exists(workspace.path() / "in"));
  EXPECT_EQ(Line(RunPlan(FallbackPlan(workspace.path(),
                                      {"probe", "write", (outside.path() / "out").string()}))),
            "EACCES");
  EXPECT_FALSE(std::filesystem::exists(outside.path() / "out"));
}

TEST(LandlockFallback, HomeIsAPrivateDirectoryRemovedAfterTheRun) {
  CORDON_REQUIRE_FALLBACK();
  TempDir workspace;
  auto run = RunPlan(FallbackPlan(workspace.path(), {"probe", "env", "HOME"}));
  std::string line = Line(run);
  ASSERT_TRUE(line.starts_with("ok /tmp/cordon-")) << line;
  std::filesystem::path home = line.substr(3);
  EXPECT_FALSE(std::filesystem::exists(home.parent_path())) << "private dir left behind";
  auto write = RunPlan(FallbackPlan(workspace.path(), {"/bin/sh", "-c",
                                                       "echo x > $HOME/f && "
                                                       "echo x > $TMPDIR/f && "
                                                       "echo ok"}));
  EXPECT_EQ(Line(write), "ok");
}

TEST(LandlockFallback, HostTcpIsRefusedAndAProcessOutsideCannotBeSignalled) {
  CORDON_REQUIRE_FALLBACK();
  TempDir workspace;
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 1), 0);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string port = std::to_string(ntohs(addr.sin_port));
  EXPECT_EQ(
      Line(RunPlan(FallbackPlan(workspace.path(), {"probe", "connect-tcp", "127.0.0.1", port}))),
      "EAFNOSUPPORT");
  EXPECT_LT(::accept(listener, nullptr, nullptr), 0);
  ::close(listener);
  if (Features().landlock_abi >= 6) {  // signal scoping
    EXPECT_EQ(Line(RunPlan(
                  FallbackPlan(workspace.path(), {"probe", "kill", std::to_string(::getpid())}))),
              "EPERM");
  }
}

long Counter(const std::filesystem::path& file) {
  std::ifstream in(file);
  long pid = -1, counter = -1;
  in >> pid >> counter;
  return counter;
}

TEST(LandlockFallback, ADaemonThatCalledSetsidDiesWithTheCommand) {
  CORDON_REQUIRE_FALLBACK();
  TempDir workspace;
  auto heartbeat = workspace.path() / "heartbeat";
  std::string script = StageProbe(workspace.path()) + " daemonize " + heartbeat.string() +
                       " && until [ -s " + heartbeat.string() +
                       " ]; do sleep 0.02; done; sleep 0.1";
  auto run = RunPlan(FallbackPlan(workspace.path(), {"/bin/sh", "-c", script}));
  ASSERT_EQ(Line(run), "ok");
  long after = Counter(heartbeat);
  EXPECT_GE(after, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Counter(heartbeat), after) << "the daemon outlived the command";
}

}  // namespace
}  // namespace cordon::testing
