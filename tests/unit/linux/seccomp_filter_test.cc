// The filter is built and exported in the parent; installing it happens only in forked
// children here (never in the test process).
#include "linux/seccomp_filter.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox_runner.h"

namespace cordon::linux_native {
namespace {

TEST(SeccompFilter, ExportsANonEmptyProgramForEverySocketPolicy) {
  for (auto sockets : {plan::SocketPolicy::kAny, plan::SocketPolicy::kLocalFamilies,
                       plan::SocketPolicy::kUnixAndNetlink}) {
    auto program = BuildSeccompProgram({.enabled = true, .sockets = sockets});
    ASSERT_TRUE(program) << program.error().message;
    EXPECT_GT(program->size(), 10u);
    EXPECT_LT(program->size(), 4096u) << "BPF_MAXINSNS";
  }
}

TEST(SeccompFilter, TheDenyListNamesTheDangerousCalls) {
  const auto& denied = DeniedSyscalls();
  for (std::string name : {"keyctl", "bpf", "io_uring_setup", "mount", "setns", "open_by_handle_at",
                           "kexec_load", "init_module"}) {
    EXPECT_NE(std::find(denied.begin(), denied.end(), name), denied.end()) << name;
  }
}

// Installs the filter in a forked child and returns what `attempt` reports there as the exit
// code (0 = allowed, else the errno).
template <typename F>
int InChildWithFilter(plan::SocketPolicy sockets, F attempt) {
  auto program = BuildSeccompProgram({.enabled = true, .sockets = sockets});
  if (!program) return -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(200);
    if (InstallSeccomp(*program).failed()) ::_exit(201);
    ::_exit(attempt());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

TEST(SeccompFilter, RefusesNewUserNamespacesButAllowsPlainForks) {
  EXPECT_EQ(InChildWithFilter(plan::SocketPolicy::kAny,
                              [] { return ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno; }),
            EPERM);
  EXPECT_EQ(InChildWithFilter(plan::SocketPolicy::kAny,
                              [] {
                                pid_t p = ::fork();
                                if (p == 0) ::_exit(0);
                                return p > 0 ? 0 : errno;
                              }),
            0);
}

int SocketErrno(int family) {
  int fd = ::socket(family, SOCK_STREAM, 0);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  return errno;
}

TEST(SeccompFilter, SocketFamiliesFollowThePolicy) {
  using plan::SocketPolicy;
  EXPECT_EQ(InChildWithFilter(SocketPolicy::kLocalFamilies, [] { return SocketErrno(AF_VSOCK); }),
            EAFNOSUPPORT);
  EXPECT_EQ(InChildWithFilter(SocketPolicy::kLocalFamilies, [] { return SocketErrno(AF_INET); }),
            0);
  EXPECT_EQ(InChildWithFilter(SocketPolicy::kUnixAndNetlink, [] { return SocketErrno(AF_INET); }),
            EAFNOSUPPORT);
  EXPECT_EQ(InChildWithFilter(SocketPolicy::kUnixAndNetlink, [] { return SocketErrno(AF_UNIX); }),
            0);
  auto netlink = [](int protocol) {
    int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
  };
  EXPECT_EQ(
      InChildWithFilter(SocketPolicy::kUnixAndNetlink, [&] { return netlink(NETLINK_SOCK_DIAG); }),
      EPROTONOSUPPORT);
  EXPECT_EQ(
      InChildWithFilter(SocketPolicy::kUnixAndNetlink, [&] { return netlink(NETLINK_ROUTE); }), 0);
}

}  // namespace
}  // namespace cordon::linux_native
