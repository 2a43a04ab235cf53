// cordon-init's exec mode (linux/exec_stub.h), run on the host without a sandbox: what a
// prepared command process does with the request the supervisor sends (SendExecRequest), and
// what it does with a request that is malformed. Checked from outside: the command's output,
// its exit status, files it would have written, the report on the socket.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/unique_fd.h"
#include "linux/exec_request.h"
#include "linux/system_headers/syscalls.h"
#include "sandbox_runner.h"

namespace cordon::linux_native {
namespace {

using core::UniqueFd;

// cordon-init --exec 3, its fd 3 one end of a socketpair; `ours` is the other end.
struct Stub {
  pid_t pid = -1;
  UniqueFd ours;

  Stub() = default;
  Stub(Stub&& other) noexcept : pid(std::exchange(other.pid, -1)), ours(std::move(other.ours)) {}
  Stub& operator=(Stub&&) = delete;

  // The wait status once it exited.
  int Wait() {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    return status;
  }
  ~Stub() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      Wait();
    }
  }
};

Stub StartStub(const char* fd_arg = "3") {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  Stub stub;
  stub.ours.Reset(fds[0]);
  stub.pid = ::fork();
  if (stub.pid == 0) {
    if (::dup2(fds[1], 3) != 3) ::_exit(99);  // dup2 clears close-on-exec
    // As in the sandbox: the prepared process holds nothing else (child_steps.cc).
    if (sys::CloseRange(4, ~0U, 0) != 0) ::_exit(97);
    char name[] = "cordon-init";
    char mode[] = "--exec";
    char* const argv[] = {name, mode, const_cast<char*>(fd_arg), nullptr};
    char* const envp[] = {nullptr};
    ::execve(CORDON_INIT_PATH, argv, envp);
    ::_exit(98);
  }
  ::close(fds[1]);
  return stub;
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read.Reset(fds[0]);
    write.Reset(fds[1]);
  }
  std::string Drain() {
    write.Reset();
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(read.get(), buffer, sizeof buffer)) > 0) out.append(buffer, n);
    return out;
  }
};

ExecRequest Shell(const std::string& text, const std::filesystem::path& cwd) {
  ExecRequest request;
  request.cwd = cwd.string();
  request.argv = {"sh", "-c", text};
  request.env = {"PATH=/usr/bin:/bin", "CANARY=inside"};
  request.candidates = {"/nonexistent/sh", "/bin/sh"};
  return request;
}

TEST(ExecStub, RunsTheCommandWithItsArgumentsEnvironmentDirectoryAndDescriptors) {
  testing::TempDir dir;
  Stub stub = StartStub();
  Pipe out;
  Pipe err;
  ExecRequest request = Shell("echo \"$CANARY $0\"; pwd; echo oops >&2; exit 7", dir.path());
  request.stdio.stdout_fd = out.write.get();
  request.stdio.stderr_fd = err.write.get();
  ASSERT_TRUE(SendExecRequest(stub.ours.get(), request));
  Result<std::optional<ExecFailure>> outcome = ReadExecOutcome(stub.ours.get());
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_FALSE(outcome->has_value()) << "the stub reported a failure";
  const int status = stub.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7) << status;
  EXPECT_EQ(out.Drain(), "inside sh\n" + std::filesystem::canonical(dir.path()).string() + "\n");
  EXPECT_EQ(err.Drain(), "oops\n");
}

TEST(ExecStub, TheRequestSocketDoesNotReachTheCommand) {
  testing::TempDir dir;
  Stub stub = StartStub();
  Pipe out;
  // Descriptors the command holds: 0, 1, 2 only (the listing's own directory descriptor aside).
  ExecRequest request = Shell("ls /proc/self/fd | wc -l", dir.path());
  request.stdio.stdout_fd = out.write.get();
  ASSERT_TRUE(SendExecRequest(stub.ours.get(), request));
  ASSERT_TRUE(ReadExecOutcome(stub.ours.get()));
  stub.Wait();
  EXPECT_EQ(out.Drain(), "4\n");  // 0, 1, 2 and ls's own
}

TEST(ExecStub, ACommandNotFoundIsReportedAndNothingRuns) {
  testing::TempDir dir;
  Stub stub = StartStub();
  ExecRequest request = Shell("true", dir.path());
  request.argv = {"missing"};
  request.candidates = {"/nonexistent/missing", (dir.path() / "missing").string()};
  ASSERT_TRUE(SendExecRequest(stub.ours.get(), request));
  Result<std::optional<ExecFailure>> outcome = ReadExecOutcome(stub.ours.get());
  ASSERT_TRUE(outcome && outcome->has_value());
  EXPECT_EQ((*outcome)->step, static_cast<std::uint32_t>(ExecFailureStep::kExecve));
  EXPECT_EQ((*outcome)->err, ENOENT);
  const int status = stub.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127) << status;
}

TEST(ExecStub, APermissionDeniedCandidateIsRememberedWhileTheSearchGoesOn) {
  testing::TempDir dir;
  const std::filesystem::path plain = dir.path() / "plain";
  ASSERT_EQ(::close(::open(plain.c_str(), O_WRONLY | O_CREAT, 0644)), 0);  // not executable
  Stub stub = StartStub();
  ExecRequest request = Shell("true", dir.path());
  request.argv = {"plain"};
  request.candidates = {plain.string(), "/nonexistent/plain"};
  ASSERT_TRUE(SendExecRequest(stub.ours.get(), request));
  Result<std::optional<ExecFailure>> outcome = ReadExecOutcome(stub.ours.get());
  ASSERT_TRUE(outcome && outcome->has_value());
  EXPECT_EQ((*outcome)->err, EACCES);
  // Twin: the same search with an executable candidate after it runs that one.
  Stub twin = StartStub();
  request.candidates = {plain.string(), "/bin/true"};
  ASSERT_TRUE(SendExecRequest(twin.ours.get(), request));
  outcome = ReadExecOutcome(twin.ours.get());
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->has_value());
  const int status = twin.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(ExecStub, AWorkingDirectoryThatIsGoneIsReported) {
  testing::TempDir dir;
  Stub stub = StartStub();
  ExecRequest request = Shell("touch ran", dir.path() / "gone");
  ASSERT_TRUE(SendExecRequest(stub.ours.get(), request));
  Result<std::optional<ExecFailure>> outcome = ReadExecOutcome(stub.ours.get());
  ASSERT_TRUE(outcome && outcome->has_value());
  EXPECT_EQ((*outcome)->step, static_cast<std::uint32_t>(ExecFailureStep::kChdir));
  EXPECT_EQ((*outcome)->err, ENOENT);
  stub.Wait();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "ran"));
}

// A request the supervisor would never send: raw bytes, no descriptors. The body names a command
// that would leave a mark in the test's directory if it ran: cwd, "touch", the mark, and the
// candidate /usr/bin/touch.
struct RawCase {
  const char* name;
  std::uint32_t magic = kExecRequestMagic;
  std::uint32_t argc = 2;
  std::uint32_t envc = 0;
  std::uint32_t pathc = 1;
  std::uint32_t stdio_mask = 0;
  long body_delta = 0;           // body_bytes = the body's real size + this
  std::uint32_t body_bytes = 0;  // when not 0: body_bytes, whatever the body's size
  std::string trailing;          // sent after the body
  bool close_early = false;      // the supervisor's end closes before the body is complete
  int expected_err = EPROTO;
};

// The body of a raw request: cwd `dir`, argv {"touch", mark}, candidate /usr/bin/touch.
std::string TouchBody(const std::filesystem::path& dir, const std::filesystem::path& mark) {
  return dir.string() + '\0' + "touch" + '\0' + mark.string() + '\0' + "/usr/bin/touch" + '\0';
}

// Sends `header`, `body` and `trailing` as raw bytes, no descriptors.
void SendRaw(int socket, const ExecRequestHeader& header, const std::string& body,
             const std::string& trailing = "") {
  std::string message(reinterpret_cast<const char*>(&header), sizeof header);
  message += body + trailing;
  ASSERT_EQ(::send(socket, message.data(), message.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(message.size()));
}

class ExecStubMalformed : public ::testing::TestWithParam<RawCase> {};

TEST_P(ExecStubMalformed, IsRefusedAndRunsNothing) {
  testing::TempDir dir;
  const RawCase& c = GetParam();
  const std::filesystem::path mark = dir.path() / "ran";
  const std::string body = TouchBody(dir.path(), mark);
  ExecRequestHeader header;
  header.magic = c.magic;
  header.argc = c.argc;
  header.envc = c.envc;
  header.pathc = c.pathc;
  header.stdio_mask = c.stdio_mask;
  header.body_bytes =
      c.body_bytes != 0 ? c.body_bytes
                        : static_cast<std::uint32_t>(static_cast<long>(body.size()) + c.body_delta);
  Stub stub = StartStub();
  SendRaw(stub.ours.get(), header, body, c.trailing);
  if (c.close_early) ::shutdown(stub.ours.get(), SHUT_WR);
  Result<std::optional<ExecFailure>> outcome = ReadExecOutcome(stub.ours.get());
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_TRUE(outcome->has_value()) << c.name << ": no report";
  EXPECT_EQ((*outcome)->step, static_cast<std::uint32_t>(ExecFailureStep::kRequest)) << c.name;
  EXPECT_EQ((*outcome)->err, c.expected_err) << c.name;
  const int status = stub.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127) << c.name << ": " << status;
  EXPECT_FALSE(std::filesystem::exists(mark)) << c.name;
}

// Twin of the cases below: the same raw request, well formed, runs the command.
TEST(ExecStub, AWellFormedRawRequestRuns) {
  testing::TempDir dir;
  const std::filesystem::path mark = dir.path() / "ran";
  const std::string body = TouchBody(dir.path(), mark);
  ExecRequestHeader header;
  header.argc = 2;
  header.pathc = 1;
  header.body_bytes = static_cast<std::uint32_t>(body.size());
  Stub stub = StartStub();
  SendRaw(stub.ours.get(), header, body);
  Result<std::optional<ExecFailure>> outcome = ReadExecOutcome(stub.ours.get());
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->has_value());
  const int status = stub.Wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(std::filesystem::exists(mark));
}

INSTANTIATE_TEST_SUITE_P(
    Requests, ExecStubMalformed,
    ::testing::Values(RawCase{.name = "bad magic", .magic = 0x12345678},
                      RawCase{.name = "no argv", .argc = 0},
                      RawCase{.name = "no candidate", .pathc = 0},
                      RawCase{.name = "descriptors promised, none sent", .stdio_mask = 3},
                      RawCase{.name = "unknown stdio bit", .stdio_mask = 8},
                      RawCase{.name = "more strings than the body holds", .envc = 5},
                      RawCase{
                          .name = "bytes after the last string", .body_delta = 2, .trailing = "xx"},
                      RawCase{.name = "body larger than the bound",
                              .body_bytes = kExecRequestMaxBody + 1,
                              .expected_err = EMSGSIZE},
                      RawCase{.name = "too many strings",
                              .argc = kExecRequestMaxStrings,
                              .envc = 1,
                              .expected_err = EMSGSIZE},
                      RawCase{.name = "body cut short", .body_delta = 4096, .close_early = true}),
    [](const ::testing::TestParamInfo<RawCase>& param_info) {
      std::string name = param_info.param.name;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

TEST(ExecStub, ARequestSocketArgumentThatIsNotADescriptorAbove2IsRefused) {
  for (const char* bad : {"abc", "1", "-3", ""}) {
    Stub stub = StartStub(bad);
    const int status = stub.Wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 126) << bad << ": " << status;
  }
}

}  // namespace
}  // namespace cordon::linux_native
