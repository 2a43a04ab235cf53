// Session::Create and Session::Run's handling of the request itself: what is refused before
// anything starts, stdin, concurrent runs. Each refusal has an accepted twin.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "kernel_support.h"
#include "session/run_for.h"

namespace cordon::kernel_test {
namespace {

using namespace std::chrono_literals;
using SessionTest = KernelTest;

TEST_F(SessionTest, CreateCanonicalisesTheWorkspace) {
  std::filesystem::create_directory_symlink(workspace_, root_ / "link");
  Result<Session> session = Session::Create(MakeConfig(), root_ / "link" / ".");
  ASSERT_TRUE(session.has_value()) << session.error().message;
  EXPECT_EQ(session->workspace(), workspace_);
}

TEST_F(SessionTest, CreateRefusesAMissingWorkspaceNamingIt) {
  Result<Session> session = Session::Create(MakeConfig(), root_ / "missing");
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.error().code, ErrorCode::kNotFound);
  EXPECT_NE(session.error().message.find((root_ / "missing").string()), std::string::npos)
      << session.error().message;
}

TEST_F(SessionTest, CreateRefusesAWorkspaceThatIsAFile) {
  const std::filesystem::path file = root_ / "file";
  { std::ofstream(file) << "x"; }
  Result<Session> session = Session::Create(MakeConfig(), file);
  ASSERT_FALSE(session.has_value());
  EXPECT_NE(session.error().message.find("is not a directory"), std::string::npos)
      << session.error().message;
}

TEST_F(SessionTest, CreateRefusesTheRootDirectoryAsWorkspace) {
  Result<Session> session = Session::Create(MakeConfig(), "/");
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.error().code, ErrorCode::kInvalidArgument);
}

// A configured writable root inside the workspace that a command replaced with a link (it can:
// the workspace is writable) must not make the next session bind the link's target writable.
TEST_F(SessionTest, AWritableRootALinkInTheWorkspaceMadeIsRefusedByTheNextSession) {
  const std::filesystem::path outside = root_ / "outside";
  std::filesystem::create_directory(outside);
  std::filesystem::create_directory(workspace_ / "cache");
  Config config = MakeConfig();
  config.sandbox.writable_roots = {workspace_ / "cache"};
  {
    auto first = SessionOrSkip(config);
    if (!first) return;
    const RunResult swap =
        Shell(*first, fmt::format("mv cache cache.old && ln -s '{}' cache", outside.string()));
    ASSERT_EQ(swap.exit_code, 0) << Describe(swap);
  }
  Result<Session> next = Session::Create(config, workspace_);
  ASSERT_FALSE(next.has_value()) << "the link's target would be bound writable";
  EXPECT_EQ(next.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(next.error().message.find("a symbolic link inside"), std::string::npos)
      << next.error().message;
  EXPECT_NE(next.error().message.find((workspace_ / "cache").string()), std::string::npos)
      << next.error().message;
  // Twins: the same link outside every writable root (made by the user) is followed, and the
  // directory named itself is accepted.
  std::filesystem::create_directory_symlink(outside, root_ / "link");
  config.sandbox.writable_roots = {root_ / "link"};
  Result<Session> linked = Session::Create(config, workspace_);
  ASSERT_TRUE(linked.has_value()) << linked.error().message;
  EXPECT_EQ(linked->config().sandbox.writable_roots.front(), outside);
  config.sandbox.writable_roots = {outside};
  EXPECT_TRUE(Session::Create(config, workspace_).has_value());
}

// The same for a link a command made inside another writable root (not the workspace): a
// root configured beneath a root the command could write is its to replace. The twin: the
// roots as they were are accepted.
TEST_F(SessionTest, AWritableRootALinkInAnotherWritableRootMadeIsRefusedByTheNextSession) {
  const std::filesystem::path outside = root_ / "outside";
  const std::filesystem::path extra = root_ / "extra";
  std::filesystem::create_directory(outside);
  std::filesystem::create_directories(extra / "deps");
  Config config = MakeConfig();
  config.sandbox.writable_roots = {extra, extra / "deps"};
  {
    auto first = SessionOrSkip(config);
    if (!first) return;
    const RunResult swap =
        Shell(*first, fmt::format("cd '{}' && mv deps deps.old && ln -s '{}' deps", extra.string(),
                                  outside.string()));
    ASSERT_EQ(swap.exit_code, 0) << Describe(swap);
  }
  Result<Session> next = Session::Create(config, workspace_);
  ASSERT_FALSE(next.has_value()) << "the link's target would be bound writable";
  EXPECT_NE(next.error().message.find("a symbolic link inside"), std::string::npos)
      << next.error().message;
  EXPECT_NE(next.error().message.find((extra / "deps").string()), std::string::npos)
      << next.error().message;
  std::filesystem::remove(extra / "deps");
  std::filesystem::rename(extra / "deps.old", extra / "deps");
  EXPECT_TRUE(Session::Create(config, workspace_).has_value());
}

TEST_F(SessionTest, CreateRefusesAnInvalidPolicyPattern) {
  Config config = MakeConfig();
  config.command_policy.deny = {"("};
  Result<Session> session = Session::Create(config, workspace_);
  ASSERT_FALSE(session.has_value());
  EXPECT_EQ(session.error().code, ErrorCode::kConfig) << session.error().message;
}

TEST_F(SessionTest, RequestNeedsExactlyOneOfArgvAndShellText) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest neither;
  EXPECT_EQ(session->Run(neither).status, RunStatus::kSetupFailed);
  CommandRequest both;
  both.argv = {"true"};
  both.shell_text = "true";
  const RunResult refused = session->Run(both);
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed);
  EXPECT_NE(refused.error.find("exactly one"), std::string::npos) << refused.error;
  CommandRequest empty_text;
  empty_text.shell_text = "  ";
  EXPECT_EQ(session->Run(empty_text).status, RunStatus::kSetupFailed);
  // The twins: each form alone runs.
  CommandRequest argv_only;
  argv_only.argv = {"echo", "a b", "$HOME"};
  const RunResult argv_run = session->Run(argv_only);
  EXPECT_EQ(argv_run.stdout_data.data, "a b $HOME\n") << Describe(argv_run);
  CommandRequest text_only;
  text_only.shell_text = "echo a  b";
  EXPECT_EQ(session->Run(text_only).stdout_data.data, "a b\n");
}

TEST_F(SessionTest, ArgvIsJudgedByThePolicyAsTheWordsThatRun) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest request;
  request.argv = {"sudo", "true"};
  const RunResult denied = session->Run(request);
  EXPECT_EQ(denied.status, RunStatus::kDenied) << Describe(denied);
  // An argv word that merely contains the text is data, not a command.
  request.argv = {"echo", "sudo true"};
  const RunResult allowed = session->Run(request);
  EXPECT_EQ(allowed.status, RunStatus::kExited) << Describe(allowed);
}

// A command that cannot be executed in the sandbox ends as a shell's would: 127 when it is not
// found (with a hint when one argument holds shell text), 126 when it is not executable; the
// twin runs.
TEST_F(SessionTest, ACommandThatCannotBeExecutedExits127Or126AndSaysWhy) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  std::ofstream(workspace_ / "script.sh") << "#!/bin/sh\necho ran\n";
  CommandRequest request;
  request.argv = {"cordon-no-such-command"};
  const RunResult missing = session->Run(request);
  EXPECT_EQ(missing.status, RunStatus::kExited) << Describe(missing);
  EXPECT_EQ(missing.exit_code, 127) << Describe(missing);
  EXPECT_NE(missing.error.find("cordon-no-such-command: command not found in the sandbox (PATH: "),
            std::string::npos)
      << Describe(missing);
  request.argv = {"ls -la | wc -l"};
  const RunResult text = session->Run(request);
  EXPECT_EQ(text.exit_code, 127) << Describe(text);
  EXPECT_NE(text.error.find("pass it with -c"), std::string::npos) << Describe(text);
  request.argv = {"./script.sh"};
  const RunResult not_executable = session->Run(request);
  EXPECT_EQ(not_executable.status, RunStatus::kExited) << Describe(not_executable);
  EXPECT_EQ(not_executable.exit_code, 126) << Describe(not_executable);
  EXPECT_NE(not_executable.error.find("not executable"), std::string::npos)
      << Describe(not_executable);
  std::filesystem::permissions(workspace_ / "script.sh", std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add);
  const RunResult ran = session->Run(request);
  EXPECT_EQ(ran.exit_code, 0) << Describe(ran);
  EXPECT_EQ(ran.stdout_data.data, "ran\n") << Describe(ran);
  EXPECT_TRUE(ran.error.empty()) << Describe(ran);
}

// Caller::before_start (cordon's run server judges its client meanwhile): asked once,
// and its refusal comes before anything of the run exists, the run's .git placeholder (the
// workspace has no .git: each run holds one) included. The twin goes on and runs.
TEST_F(SessionTest, ARunRefusedBeforeItStartsLeavesNothingBehind) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int asked = 0;
  CommandRequest request;
  request.shell_text = "touch started";
  session::Caller caller;
  caller.before_start = [&]() -> Result<void> {
    ++asked;
    return Fail(ErrorCode::kUnavailable, "not yet, says the caller");
  };
  const RunResult refused = session::RunFor(*session, request, caller);
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed) << Describe(refused);
  EXPECT_NE(refused.error.find("not yet, says the caller"), std::string::npos) << refused.error;
  EXPECT_EQ(asked, 1);
  EXPECT_FALSE(std::filesystem::exists(workspace_ / "started"));
  const bool placeholder_after_refusal = std::filesystem::exists(workspace_ / ".git");

  asked = 0;
  caller.before_start = [&]() -> Result<void> {
    ++asked;
    return {};
  };
  const RunResult ran = session::RunFor(*session, request, caller);
  EXPECT_EQ(ran.status, RunStatus::kExited) << Describe(ran);
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(std::filesystem::exists(workspace_ / "started"));
  if (std::filesystem::exists(workspace_ / ".git")) {
    EXPECT_FALSE(placeholder_after_refusal) << "the refused run made the .git placeholder";
  }
}

TEST_F(SessionTest, BeforeStartIsNotAskedAboutACommandThePolicyDenies) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int asked = 0;
  CommandRequest request;
  session::Caller caller;
  caller.before_start = [&]() -> Result<void> {
    ++asked;
    return {};
  };
  request.argv = {"sudo", "true"};
  EXPECT_EQ(session::RunFor(*session, request, caller).status, RunStatus::kDenied);
  EXPECT_EQ(asked, 0);
  request.argv = {"true"};
  EXPECT_EQ(session::RunFor(*session, request, caller).status, RunStatus::kExited);
  EXPECT_EQ(asked, 1);
}

TEST_F(SessionTest, NonPositiveTimeoutIsRefusedAndAPositiveOneApplies) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest request;
  request.shell_text = "true";
  request.timeout = 0ms;
  EXPECT_EQ(session->Run(request).status, RunStatus::kSetupFailed);
  request.timeout = 5s;
  EXPECT_EQ(session->Run(request).status, RunStatus::kExited);
}

TEST_F(SessionTest, RelativeWorkingDirectoryIsTakenInsideTheWorkspace) {
  std::filesystem::create_directory(workspace_ / "sub");
  std::filesystem::create_directory_symlink(root_, workspace_ / "up");
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest request;
  request.argv = {"pwd"};
  request.cwd = "sub";
  EXPECT_EQ(session->Run(request).stdout_data.data, (workspace_ / "sub").string() + "\n");
  // A link inside the workspace that resolves outside it is refused.
  request.cwd = "up";
  const RunResult refused = session->Run(request);
  EXPECT_EQ(refused.status, RunStatus::kSetupFailed);
  EXPECT_NE(refused.error.find("outside the workspace"), std::string::npos) << refused.error;
}

TEST_F(SessionTest, StdinIsDevNullUnlessTheCallerPassesADescriptor) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest request;
  request.shell_text = "cat";
  request.timeout = 10s;
  const RunResult closed = session->Run(request);
  EXPECT_EQ(closed.status, RunStatus::kExited) << Describe(closed);
  EXPECT_EQ(closed.stdout_data.data, "");

  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(::write(fds[1], "from caller\n", 12), 12);
  ::close(fds[1]);
  request.stdin_fd = fds[0];
  const RunResult fed = session->Run(request);
  ::close(fds[0]);
  EXPECT_EQ(fed.stdout_data.data, "from caller\n") << Describe(fed);
}

// A caller's pipe or file is copied into a pipe of the command's own, never handed over:
// through /proc/self/fd/0 the command could reopen what it refers to for writing — lines into
// the pipe the caller's shell reads next (`... | while read x; do cordon run ...; done`), or
// the caller's file outside the view. From outside: neither changed. The twin: the command
// read every byte of both.
TEST_F(SessionTest, ACallersPipeOrFileOnStdinIsReadNotReopenedForWriting) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest request;
  request.shell_text =
      "cat; echo injected > /proc/self/fd/0 2>/dev/null; echo injected >> /dev/stdin "
      "2>/dev/null; true";
  request.timeout = 10s;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_EQ(::write(fds[1], "next line\n", 10), 10);
  request.stdin_fd = fds[0];
  // The caller's writer stays open, as a shell loop's does: the run ends with the command.
  std::thread closer([&] {
    std::this_thread::sleep_for(300ms);
    ::close(fds[1]);
  });
  const RunResult piped = session->Run(request);
  closer.join();
  EXPECT_EQ(piped.status, RunStatus::kExited) << Describe(piped);
  EXPECT_EQ(piped.stdout_data.data, "next line\n") << Describe(piped);
  char left[64];
  const ssize_t n = ::read(fds[0], left, sizeof left);  // the writer is closed: EOF, or data
  ::close(fds[0]);
  EXPECT_EQ(n, 0) << "the caller's pipe holds: " << std::string(left, n > 0 ? n : 0);

  // Below /tmp, but judged through the descriptor, which reaches it wherever it lies.
  const std::filesystem::path file = root_ / "caller-input.txt";
  std::ofstream(file) << "from a file\n";
  const int file_fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(file_fd, 0);
  request.stdin_fd = file_fd;
  const RunResult from_file = session->Run(request);
  ::close(file_fd);
  EXPECT_EQ(from_file.stdout_data.data, "from a file\n") << Describe(from_file);
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "from a file\n");
}

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

// Caller::take_fds (the run server's way): Run owns the caller's descriptors and closes them itself
// — the output ones once their streams ended, so that the reader sees EOF when the run returns
// without the caller closing anything — also on a path where nothing ran (a denial).
TEST_F(SessionTest, TakenDescriptorsAreClosedByTheRunOnEveryPath) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int out[2];
  int in[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::write(in[1], "fed\n", 4), 4);
  ::close(in[1]);
  CommandRequest request;
  request.shell_text = "cat; echo done";
  request.timeout = 10s;
  request.capture_output = false;
  request.stdin_fd = in[0];
  request.stdout_fd = out[1];
  request.stderr_fd = ::dup(out[1]);
  ASSERT_GE(request.stderr_fd, 0);
  const int stderr_copy = request.stderr_fd;
  const RunResult result = session::RunFor(*session, request, {.take_fds = true});
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_FALSE(IsOpen(in[0]));
  EXPECT_FALSE(IsOpen(out[1]));
  EXPECT_FALSE(IsOpen(stderr_copy));
  // Every write end is gone: the reader gets the whole output and then EOF, at once.
  std::string text;
  char buffer[64];
  ssize_t n;
  while ((n = ::read(out[0], buffer, sizeof buffer)) > 0) text.append(buffer, n);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(text, "fed\ndone\n");
  ::close(out[0]);

  int denied_out[2];
  ASSERT_EQ(::pipe2(denied_out, O_CLOEXEC), 0);
  CommandRequest denied;
  denied.shell_text = "rm -rf /";
  denied.capture_output = false;
  denied.stdout_fd = denied_out[1];
  EXPECT_EQ(session::RunFor(*session, denied, {.take_fds = true}).status, RunStatus::kDenied);
  EXPECT_FALSE(IsOpen(denied_out[1]));
  ::close(denied_out[0]);
}

// The twin: without take_fds (Session::Run) the caller keeps owning every descriptor it passed.
TEST_F(SessionTest, DescriptorsNotTakenStayTheCallers) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  CommandRequest request;
  request.shell_text = "echo kept";
  request.timeout = 10s;
  request.capture_output = false;
  request.stdout_fd = out[1];
  const RunResult result = session->Run(request);
  EXPECT_EQ(result.status, RunStatus::kExited) << Describe(result);
  EXPECT_TRUE(IsOpen(out[1]));
  ::close(out[1]);
  char buffer[16] = {};
  EXPECT_EQ(::read(out[0], buffer, sizeof buffer), 5);
  EXPECT_EQ(std::string(buffer, 5), "kept\n");
  ::close(out[0]);
}

TEST_F(SessionTest, ConcurrentRunsEachGetTheirOwnOutputPromptly) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  // Run may be called from several threads: a long run does not hold up a short one started
  // while it runs, and neither sees the other's output.
  RunResult slow, fast;
  std::thread slow_thread([&] { slow = Shell(*session, "sleep 2; echo slow"); });
  std::this_thread::sleep_for(200ms);
  const auto start = std::chrono::steady_clock::now();
  fast = Shell(*session, "echo fast");
  const auto fast_took = std::chrono::steady_clock::now() - start;
  slow_thread.join();
  EXPECT_EQ(fast.stdout_data.data, "fast\n") << Describe(fast);
  EXPECT_EQ(slow.stdout_data.data, "slow\n") << Describe(slow);
  EXPECT_LT(fast_took, 1500ms);
}

TEST_F(SessionTest, OutputIsStreamedToTheCallbackPerStream) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  std::string out, err;
  CommandRequest request;
  request.shell_text = "echo to-out; echo to-err >&2";
  const RunResult result = session->Run(request, [&](OutputStream stream, std::string_view data) {
    (stream == OutputStream::kStdout ? out : err).append(data);
  });
  EXPECT_EQ(out, "to-out\n");
  EXPECT_EQ(err, "to-err\n");
  EXPECT_EQ(result.stdout_data.data, out);
  EXPECT_EQ(result.stderr_data.data, err);
}

TEST_F(SessionTest, CapabilitiesMatchWhatARunEnforces) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const Capabilities caps = session->GetCapabilities();
  const RunResult result = Shell(*session, "true");
  EXPECT_EQ(caps.enforcement.backend, result.enforcement.backend);
  EXPECT_EQ(caps.filesystem_enforced, result.enforcement.filesystem);
  EXPECT_EQ(caps.network_enforced, result.enforcement.network);
  EXPECT_GT(result.duration.count(), 0);
}

}  // namespace
}  // namespace cordon::kernel_test
