// A long-lived session's commands share one private network namespace (decision 0043): a server
// one command started is reachable from the next commands, also after the host changed the
// session's plan shape (the zygote is rebuilt into the same network namespace), and never from
// the host or another session.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <fstream>
#include <thread>

#include "core/unique_fd.h"
#include "zygote_fixture.h"

namespace cordon::kernel_test {
namespace {

// A TCP port free on the host's loopback right now.
int FreeHostPort() {
  core::UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return -1;
  }
  return ntohs(addr.sin_port);
}

bool HostConnects(int port) {
  core::UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return ::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

TEST_P(ZygoteTest, AServerOnTheSessionsLoopbackIsReachedByLaterCommandsOnly) {
  CORDON_SKIP_UNLESS_LIBRARY("runs one command beside the others in this process");
  Config config = MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny);
  const std::filesystem::path secret = std::filesystem::canonical(workspace_) / "late.env";
  config.sandbox.hidden_paths.push_back(secret);
  auto session = SessionOrSkip(config);
  if (!session) return;
  const std::string probe = StageProbe();
  if (probe.empty()) return;
  const int port = FreeHostPort();
  ASSERT_GT(port, 0);
  const std::string connect = fmt::format("'{}' connect-tcp 127.0.0.1 {}", probe, port);
  // Twin first: nothing listens yet, so nothing answers.
  EXPECT_NE(Joined(*session, connect).stdout_data.data, "ok\n");

  // The server: a command that runs until cancelled, as a background command does.
  core::UniqueFd cancel(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  ASSERT_TRUE(cancel.valid());
  RunResult served;
  std::thread server([&] {
    CommandRequest request;
    request.shell_text = fmt::format("'{}' serve-tcp {}", probe, port);
    request.cwd = workspace_;
    request.cancel_fd = cancel.get();
    request.timeout = std::chrono::seconds(60);
    served = session->Run(request);
  });
  bool reached = false;
  for (int i = 0; i < 100 && !reached; ++i) {
    reached = Shell(*session, connect).stdout_data.data == "ok\n";
    if (!reached) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(reached) << "a later command of the session did not reach the server";
  // Never from the host: the session's loopback is not the host's.
  EXPECT_FALSE(HostConnects(port));
  // Nor from another session: a loopback of its own.
  auto other = SessionOrSkip(MakeConfig(SandboxMode::kWorkspaceWrite, NetworkPolicy::kDeny));
  if (other) {
    const RunResult elsewhere = Shell(*other, connect);
    EXPECT_NE(elsewhere.stdout_data.data, "ok\n") << Describe(elsewhere);
  }

  // The host changes the plan's shape (a hidden file appears, so the view needs a mask more):
  // the session's zygote is rebuilt, into the same network namespace, with the new view.
  const std::uint64_t built = zygote::ZygoteStarts();
  { std::ofstream(secret) << "TOKEN=hunter2\n"; }
  const RunResult after = Shell(*session, connect + "; cat late.env");
  EXPECT_GT(zygote::ZygoteStarts(), built) << "the zygote was not rebuilt";
  EXPECT_TRUE(after.stdout_data.data.starts_with("ok\n"))
      << "the server was lost with the rebuild: " << Describe(after);
  // ...and the rebuilt view is the new plan's: the new file is masked.
  EXPECT_EQ(after.stdout_data.data.find("hunter2"), std::string::npos) << Describe(after);

  const std::uint64_t one = 1;
  ASSERT_EQ(::write(cancel.get(), &one, sizeof one), static_cast<ssize_t>(sizeof one));
  server.join();
  EXPECT_EQ(served.stdout_data.data, "listening\n") << Describe(served);
  // Its whole tree died with the cancellation: nothing listens any more.
  EXPECT_NE(Shell(*session, connect).stdout_data.data, "ok\n");
}

}  // namespace
}  // namespace cordon::kernel_test
