// The hardening layers seen by a process inside the sandbox (through tests/probe), each with a
// twin showing the same attempt succeeds where it is not blocked — in mode off or from the
// test itself — so the denial is the sandbox's doing and not the machine's.
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "core/unique_fd.h"
#include "kernel_support.h"

namespace cordon::kernel_test {
namespace {

using LayersTest = ProbeTest;

std::string OwnStatusField(const std::string& name) {
  const std::string status = ReadFile("/proc/self/status");
  const std::size_t at = status.find("\n" + name + ":");
  if (at == std::string::npos) return "?";
  const std::size_t start = status.find_first_not_of(" \t", at + name.size() + 2);
  return status.substr(start, status.find('\n', start) - start);
}

TEST_F(LayersTest, CommandRunsWithNoNewPrivs) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Probe(*session, "status-field NoNewPrivs");
  EXPECT_EQ(Line(result), "ok 1") << Describe(result);
  EXPECT_TRUE(result.enforcement.no_new_privs);
}

TEST_F(LayersTest, ModeOffCommandHasTheCallersNoNewPrivs) {
  auto session = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!session) return;
  const RunResult result = Probe(*session, "status-field NoNewPrivs");
  EXPECT_EQ(Line(result), "ok " + OwnStatusField("NoNewPrivs")) << Describe(result);
}

TEST_F(LayersTest, CommandIsUnderASeccompFilter) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult result = Probe(*session, "status-field Seccomp");
  EXPECT_EQ(Line(result), "ok 2") << Describe(result);
  EXPECT_TRUE(result.enforcement.seccomp);
}

TEST_F(LayersTest, CommandCannotCreateAUserNamespaceButModeOffCan) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult denied = Probe(*session, "unshare-user");
  EXPECT_NE(Line(denied), "ok") << Describe(denied);
  // The twin: the machine allows it to the caller (the sandbox itself needs it).
  auto off = SessionOrSkip(MakeConfig(SandboxMode::kOff));
  if (!off) return;
  const RunResult allowed = Probe(*off, "unshare-user");
  EXPECT_EQ(Line(allowed), "ok") << Describe(allowed);
}

TEST_F(LayersTest, CommandCannotMountOrRemount) {
  // No twin in mode off: as root it would really mount on the host.
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult tmpfs = Probe(*session, fmt::format("mount-tmpfs '{}'", workspace_.string()));
  EXPECT_NE(Line(tmpfs), "ok") << Describe(tmpfs);
  const RunResult remount = Probe(*session, "remount-rw /usr");
  EXPECT_NE(Line(remount), "ok") << Describe(remount);
}

TEST_F(LayersTest, CommandCannotOpenCorePatternForWriting) {
  // core_pattern runs a program as host root on a crash; /proc/sys stays read-only inside.
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult denied = Probe(*session, "write-core-pattern");
  EXPECT_NE(Line(denied), "ok") << Describe(denied);
  if (::geteuid() == 0) {
    // The twin, as root only (opening for writing changes nothing): the host allows it.
    auto off = SessionOrSkip(MakeConfig(SandboxMode::kOff));
    if (!off) return;
    EXPECT_EQ(Line(Probe(*off, "write-core-pattern")), "ok");
  }
}

TEST_F(LayersTest, CommandHoldsNoDescriptorBeyondStdio) {
  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  const RunResult none = Probe(*session, "fds");
  EXPECT_EQ(Line(none), "ok 0") << Describe(none);
  // The twin: a descriptor the command opens itself is counted.
  const RunResult own = Shell(*session, fmt::format("exec 7</dev/null; '{}' fds", probe_));
  EXPECT_EQ(Line(own), "ok 1") << Describe(own);
}

TEST_F(LayersTest, CommandCannotInjectIntoTheCallersTerminal) {
  // The caller hands its terminal (a pty here) to the command as stdin, as `cordon run` does
  // interactively. TIOCSTI on it must fail and nothing may arrive at the terminal's input.
  core::UniqueFd master(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(master.valid());
  ASSERT_EQ(::grantpt(master.get()), 0);
  ASSERT_EQ(::unlockpt(master.get()), 0);
  core::UniqueFd slave(::open(::ptsname(master.get()), O_RDWR | O_NOCTTY | O_CLOEXEC));
  ASSERT_TRUE(slave.valid());
  termios raw{};
  ASSERT_EQ(::tcgetattr(slave.get(), &raw), 0);
  ::cfmakeraw(&raw);
  ASSERT_EQ(::tcsetattr(slave.get(), TCSANOW, &raw), 0);

  auto session = SessionOrSkip(MakeConfig());
  if (!session) return;
  CommandRequest request;
  request.argv = {probe_, "tiocsti"};
  request.stdin_fd = slave.get();
  const RunResult result = session->Run(request);
  EXPECT_NE(Line(result), "ok") << Describe(result);
  // Injected bytes would be readable on the slave side, as if typed.
  const int flags = ::fcntl(slave.get(), F_GETFL);
  ::fcntl(slave.get(), F_SETFL, flags | O_NONBLOCK);
  char byte = 0;
  EXPECT_LT(::read(slave.get(), &byte, 1), 0) << "a byte was injected into the terminal";

  // The twin: the route exists on this machine when the test itself may inject (root has
  // CAP_SYS_ADMIN for a terminal that is not its own, if legacy TIOCSTI is enabled).
  char space = ' ';
  if (::ioctl(slave.get(), TIOCSTI, &space) == 0) {
    EXPECT_EQ(::read(slave.get(), &byte, 1), 1);
  }
}

}  // namespace
}  // namespace cordon::kernel_test
