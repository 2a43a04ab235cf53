// Host unix sockets bound *while* a command runs (docs/decisions/0019): the mount view masks
// only the sockets that existed at planning time and Landlock below ABI 9 has no right for
// pathname connects, so the supervisor answers every connect() of the command. A host listener
// outside the writable areas, bound after the launch, receives nothing (checked on the host: no
// connection in its backlog, no datagram in its queue) and the command sees EACCES; the same
// listener inside the workspace, and the command's own sockets in the workspace, the private
// /tmp and HOME, keep working (stream and datagram), through the one-shot launch and the
// per-session zygote.
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "kernel_support.h"
#include "zygote/zygote_slot.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

// Well after the plan was made and the sandbox launched: the socket is not in the plan's masks.
constexpr auto kBindDelay = 500ms;

struct LateOutcome {
  RunResult result;
  bool reached = false;
};

class LateSocketTest : public ProbeTest {
 protected:
  // The command waits until `path` is a socket, then runs `probe_cmd path` (inside, through
  // `connect_path` when given); the host binds `path` kBindDelay after the run started.
  LateOutcome ConnectToLateSocket(const Session& session, const std::string& path, int type,
                                  const std::string& connect_path = "") {
    const char* probe_cmd = type == SOCK_STREAM ? "connect-unix" : "connect-unix-dgram";
    std::optional<HostListener> listener;
    std::thread binder([&] {
      std::this_thread::sleep_for(kBindDelay);
      listener.emplace(HostListener::Pathname(path, type));
    });
    LateOutcome out;
    out.result = Shell(session,
                       fmt::format("'{0}' wait-socket '{1}' >/dev/null && '{0}' {2} '{3}'", probe_,
                                   path, probe_cmd, connect_path.empty() ? path : connect_path),
                       20s);
    binder.join();
    out.reached = listener && listener->Reached();
    return out;  // the listener's destructor removes the socket
  }
};

TEST_F(LateSocketTest, HostSocketBoundDuringTheRunInAReadOnlyPlaceGetsNothing) {
  std::filesystem::create_directory(workspace_ / "svc");
  for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly, network));
    if (!session) return;
    for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
      const std::string path = (workspace_ / "svc" / "late.sock").string();
      const LateOutcome late = ConnectToLateSocket(*session, path, type);
      EXPECT_EQ(late.result.stdout_data.data, "EACCES\n") << Describe(late.result);
      EXPECT_FALSE(late.reached) << NetworkPolicyName(network) << " type " << type;
      // Reported as the sandbox's refusal, naming the socket (docs/denials.md).
      EXPECT_TRUE(std::any_of(late.result.denials.begin(), late.result.denials.end(),
                              [&](const Denial& d) {
                                return d.kind == "unix_socket" && d.target == path &&
                                       d.layer == "seccomp";
                              }))
          << Describe(late.result);
    }
  }
}

// The twin: the same late listener inside the writable workspace is reached.
TEST_F(LateSocketTest, HostSocketBoundDuringTheRunInTheWorkspaceIsReached) {
  std::filesystem::create_directory(workspace_ / "svc");
  for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, network));
    if (!session) return;
    for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
      const std::string path = (workspace_ / "svc" / "late.sock").string();
      const LateOutcome late = ConnectToLateSocket(*session, path, type);
      EXPECT_EQ(late.result.stdout_data.data, "ok\n") << Describe(late.result);
      EXPECT_TRUE(late.reached) << NetworkPolicyName(network) << " type " << type;
      EXPECT_TRUE(late.result.denials.empty()) << Describe(late.result);
    }
  }
}

// Where host services live (/var/lib), reached directly and through a symlink the command
// could have planted in the workspace: the check is on the socket reached, not the path text.
TEST_F(LateSocketTest, HostSocketBoundDuringTheRunUnderVarLibGetsNothingWhenRunAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a directory under /var/lib";
  const std::filesystem::path dir = "/var/lib/cordon-test-" + unique_;
  std::filesystem::create_directory(dir);
  const std::string path = (dir / "late.sock").string();
  std::filesystem::create_symlink(path, workspace_ / "link.sock");
  for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, network));
    if (!session) break;
    for (const std::string& via : {path, (workspace_ / "link.sock").string()}) {
      const LateOutcome late = ConnectToLateSocket(*session, path, SOCK_STREAM, via);
      EXPECT_EQ(late.result.stdout_data.data, "EACCES\n") << Describe(late.result);
      EXPECT_FALSE(late.reached) << NetworkPolicyName(network) << " via " << via;
    }
  }
  std::filesystem::remove_all(dir);
}

// What was checked is what is connected: another thread flips the address between the
// command's own socket in TMPDIR and a late host socket while the command connects in a loop. A
// broker that checked the address and then let the kernel read it again would lose this race.
TEST_F(LateSocketTest, AnAddressFlippedByAnotherThreadNeverReachesALateHostSocket) {
  std::filesystem::create_directory(workspace_ / "svc");
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly, NetworkPolicy::kDeny));
  if (!session) return;
  const std::string path = (workspace_ / "svc" / "late.sock").string();
  std::optional<HostListener> listener;
  std::thread binder([&] {
    std::this_thread::sleep_for(kBindDelay);
    listener.emplace(HostListener::Pathname(path));
  });
  const RunResult result =
      Shell(*session,
            fmt::format("'{0}' wait-socket '{1}' >/dev/null && '{0}' connect-unix-race "
                        "\"$TMPDIR/decoy.sock\" '{1}' 3000",
                        probe_, path),
            60s);
  binder.join();
  EXPECT_TRUE(result.stdout_data.data.starts_with("ok ")) << Describe(result);
  EXPECT_NE(result.stdout_data.data, "ok 0\n") << "the decoy was never reached: no race ran";
  EXPECT_FALSE(listener && listener->Reached());
  listener.reset();
  // The twin: unsandboxed (mode off) the same race does reach the host socket.
  auto off = SessionOrSkip(MakeConfig(SandboxMode::kOff, NetworkPolicy::kAllow));
  if (!off) return;
  HostListener host = HostListener::Pathname(path);
  const std::string decoy = (workspace_ / "decoy.sock").string();
  // On a busy machine the flipping thread may not run during one pass: up to three passes.
  RunResult raced;
  for (int pass = 0; pass < 3 && !host.Reached(); ++pass) {
    raced =
        Shell(*off, fmt::format("'{}' connect-unix-race '{}' '{}' 3000", probe_, decoy, path), 60s);
    EXPECT_TRUE(raced.stdout_data.data.starts_with("ok ")) << Describe(raced);
  }
  EXPECT_TRUE(host.Reached()) << "the race never hit the target: " << Describe(raced);
}

TEST_F(LateSocketTest, TheCommandsOwnSocketsWorkInTheWorkspaceTmpAndHome) {
  for (NetworkPolicy network : {NetworkPolicy::kDeny, NetworkPolicy::kAllow}) {
    auto session = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, network));
    if (!session) return;
    for (const char* cmd : {"unix-echo", "unix-dgram-echo"}) {
      for (const std::string& path :
           {(workspace_ / "own.sock").string(), std::string("rel.sock"),
            std::string("$TMPDIR/own.sock"), std::string("$HOME/own.sock")}) {
        const RunResult own = Shell(*session, fmt::format("'{}' {} {}", probe_, cmd, path));
        EXPECT_EQ(own.stdout_data.data, "ok\n") << cmd << " " << path << ": " << Describe(own);
      }
    }
  }
}

// The zygote path: the command's filter comes from the session's compiled program, and its
// listener reaches this run's supervisor all the same.
TEST_F(LateSocketTest, ThroughTheZygoteALateHostSocketGetsNothingAndOwnSocketsWork) {
  CORDON_SKIP_UNDER_BWRAP("the zygote serves only the native backend");
  CORDON_SKIP_UNLESS_LIBRARY("it counts this process's zygote launches; the others are served");
  session_options_.long_lived = true;
  std::filesystem::create_directory(workspace_ / "svc");
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kReadOnly, NetworkPolicy::kDeny));
  if (session) {
    const std::uint64_t before = zygote::ZygoteLaunches();
    const std::string path = (workspace_ / "svc" / "late.sock").string();
    const LateOutcome late = ConnectToLateSocket(*session, path, SOCK_STREAM);
    EXPECT_EQ(late.result.stdout_data.data, "EACCES\n") << Describe(late.result);
    EXPECT_FALSE(late.reached);
    const RunResult own =
        Shell(*session, fmt::format("'{}' unix-echo \"$TMPDIR/own.sock\"", probe_));
    EXPECT_EQ(own.stdout_data.data, "ok\n") << Describe(own);
    EXPECT_EQ(zygote::ZygoteLaunches(), before + 2) << "not launched through the zygote";
  }
}

}  // namespace
}  // namespace cordon::kernel_test
