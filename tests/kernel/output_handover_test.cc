// Output bound for a caller's pipe, when nothing of cordon's needs to see it, is written there
// by the command itself (decision 0047), checked from outside: the pipe the command's stdout
// is, and what a reader that goes away does to it. Twins: a captured run and a socket sink go
// through the supervisor as before.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;

using OutputHandoverTest = KernelTest;

// Everything readable from `fd` until EOF.
std::string Drain(int fd) {
  std::string out;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

std::string InodeOf(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? std::to_string(st.st_ino) : "?";
}

// The command prints the inode of its stdout, then a megabyte.
constexpr const char* kShowAndWrite = "stat -L -c %i /proc/self/fd/1; head -c 1048576 /dev/zero";

TEST_F(OutputHandoverTest, APipeOfTheCallersIsTheCommandsOwnStdout) {
  CORDON_SKIP_UNLESS_LIBRARY("it hands the session its own descriptors");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  CommandRequest request;
  request.shell_text = kShowAndWrite;
  request.capture_output = false;
  request.stdout_fd = p[1];
  const std::string inode = InodeOf(p[0]);
  std::string got;
  std::thread reader([&] { got = Drain(p[0]); });
  const RunResult result = session->Run(request);
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  ASSERT_GT(got.size(), 1048576u);
  EXPECT_EQ(got.substr(0, got.size() - 1048576), inode + "\n");

  // Twin: captured (as --json and MCP do), the command writes a pipe of cordon's instead.
  request.capture_output = true;
  request.stdout_fd = -1;
  request.shell_text = "stat -L -c %i /proc/self/fd/1";
  const RunResult captured = session->Run(request);
  EXPECT_EQ(captured.status, RunStatus::kExited) << Describe(captured);
  EXPECT_FALSE(captured.stdout_data.data.empty());
  EXPECT_NE(captured.stdout_data.data, inode + "\n");
}

TEST_F(OutputHandoverTest, ASocketSinkGoesThroughTheSupervisor) {
  CORDON_SKIP_UNLESS_LIBRARY("it hands the session its own descriptors");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int s[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
  CommandRequest request;
  request.shell_text = kShowAndWrite;
  request.capture_output = false;
  request.stdout_fd = s[1];
  std::string got;
  std::thread reader([&] { got = Drain(s[0]); });
  const RunResult result = session->Run(request);
  ::shutdown(s[1], SHUT_WR);
  reader.join();
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  ASSERT_GT(got.size(), 1048576u);
  EXPECT_NE(got.substr(0, got.size() - 1048576), InodeOf(s[1]) + "\n");
  ::close(s[0]);
  ::close(s[1]);
}

// A reader that stops early ends the command with SIGPIPE from its own write, as without cordon
// (`yes | head -1`), long before its timeout — also when the caller ignores SIGPIPE, as Python
// does: the command starts with default signal dispositions and none blocked, on both backends.
TEST_F(OutputHandoverTest, AReaderThatGoesAwayEndsTheCommandWithSigpipe) {
  CORDON_SKIP_UNLESS_LIBRARY("it hands the session its own descriptors");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ::close(p[0]);
  CommandRequest request;
  request.shell_text = "exec yes";
  request.capture_output = false;
  request.stdout_fd = p[1];
  request.timeout = 10s;
  struct sigaction ignore {};
  struct sigaction saved {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &saved);
  const RunResult piped = session->Run(request);
  ::sigaction(SIGPIPE, &saved, nullptr);
  ::close(p[1]);
  EXPECT_EQ(piped.status, RunStatus::kSignaled) << Describe(piped);
  EXPECT_EQ(piped.signal, SIGPIPE) << Describe(piped);
}

}  // namespace
}  // namespace cordon::kernel_test
