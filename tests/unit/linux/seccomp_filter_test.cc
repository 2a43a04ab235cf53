// The filter is built and exported in the parent; installing it happens only in forked
// children here (never in the test process).
#include "linux/seccomp_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/fd_passing.h"
#include "core/unique_fd.h"
#include "exec/write_calls.h"
#include "exec/write_observer.h"
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

// The write observer's rules (exec/write_calls.h): every call of the list this architecture has
// is one the observer decodes, and nothing else is.
TEST(SeccompFilter, EveryObservedWriteCallIsOneTheObserverReads) {
  int known = 0;
  for (const exec::WriteCall& call : exec::ObservedWriteCalls()) {
    const int nr = seccomp_syscall_resolve_name(call.name);
    if (nr == __NR_SCMP_ERROR) continue;
    ++known;
    EXPECT_TRUE(exec::WriteObserver::Observes(nr)) << call.name;
  }
  EXPECT_GE(known, 12);
  for (int nr : {SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(connect), SCMP_SYS(chmod)}) {
    EXPECT_FALSE(exec::WriteObserver::Observes(nr)) << nr;
  }
}

// Runs `attempt` in a forked child under `program` (its listener handed back), answering each
// notification with CONTINUE. Returns the numbers of the calls that were sent, and the child's
// exit code in `code` (-1: it did not exit).
template <typename F>
std::vector<int> NotifiedCalls(const std::vector<sock_filter>& program, F attempt, int* code) {
  std::vector<int> seen;
  *code = -1;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return seen;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pair[0]);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(200);
    if (InstallSeccomp(program, pair[1]).failed()) ::_exit(201);
    ::_exit(attempt());
  }
  ::close(pair[1]);
  Result<core::UniqueFd> listener = core::ReceiveFd(pair[0], 0);
  ::close(pair[0]);
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (!listener) continue;
    pollfd p{listener->get(), POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0 || (p.revents & POLLIN) == 0) continue;
    seccomp_notif request{};
    if (::ioctl(listener->get(), SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) continue;
    seen.push_back(request.data.nr);
    seccomp_notif_resp response{};
    response.id = request.id;
    response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)::ioctl(listener->get(), SECCOMP_IOCTL_NOTIF_SEND, &response);
  }
  if (WIFEXITED(status)) *code = WEXITSTATUS(status);
  return seen;
}

// With the writes observed, a set-id mode is still refused (the refusal's rule and the
// observer's never match one call), a plain create reaches the supervisor and goes on as the
// kernel decides, and a read-only open never leaves the kernel.
TEST(SeccompFilter, ObservedWritesContinueAndSetidModesStayRefused) {
  auto program = BuildSeccompProgram({.enabled = true,
                                      .sockets = plan::SocketPolicy::kAny,
                                      .refuse_setid_modes = true,
                                      .broker_connect = true,
                                      .observe_writes = true});
  ASSERT_TRUE(program) << program.error().message;
  char dir_template[] = "/var/tmp/cordon-observe-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  int code = -1;
  const std::vector<int> seen = NotifiedCalls(
      *program,
      [&] {
        // Exit code: bit 0 set-id create refused, bit 1 plain create made, bit 2 read-only
        // open worked, bit 3 set-id mkdir refused.
        int bits = 0;
        const std::string setid = dir + "/setid";
        if (::open(setid.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 04755) < 0 && errno == EPERM) {
          bits |= 1;
        }
        const int made = ::open((dir + "/plain").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (made >= 0) bits |= 2;
        if (::open((dir + "/plain").c_str(), O_RDONLY | O_CLOEXEC) >= 0) bits |= 4;
        if (::mkdir((dir + "/setid-dir").c_str(), 02755) != 0 && errno == EPERM) bits |= 8;
        return bits;
      },
      &code);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(code, 1 | 2 | 4 | 8);
  // Only the plain create was sent (open or openat, as libc makes it).
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(exec::WriteObserver::Observes(seen[0]));
}

// A raw inet socket goes to the supervisor (to be reported) and on to the kernel; every other
// socket() stays in the kernel. Where inet is refused by family, the refusal stands alone.
TEST(SeccompFilter, RawInetSocketsAloneGoToTheSupervisor) {
  const auto attempt = [] {
    const int raw = ::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
    const int raw6 = ::socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
    const int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int unix_socket = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // Bit 0: the raw socket is what the kernel alone decides (made exactly when this process
    // holds CAP_NET_RAW); bit 1: the others were made.
    const bool privileged = ::geteuid() == 0;
    return ((raw >= 0) == privileged && (raw6 >= 0) == privileged ? 1 : 0) |
           (udp >= 0 && unix_socket >= 0 ? 2 : 0);
  };
  auto program = BuildSeccompProgram(
      {.enabled = true, .sockets = plan::SocketPolicy::kLocalFamilies, .broker_connect = true});
  ASSERT_TRUE(program) << program.error().message;
  int code = -1;
  std::vector<int> seen = NotifiedCalls(*program, attempt, &code);
  EXPECT_EQ(code, 1 | 2);
  EXPECT_EQ(seen, (std::vector<int>{SCMP_SYS(socket), SCMP_SYS(socket)}));
  // Without the broker, nothing is sent.
  program = BuildSeccompProgram({.enabled = true, .sockets = plan::SocketPolicy::kLocalFamilies});
  ASSERT_TRUE(program) << program.error().message;
  seen = NotifiedCalls(*program, attempt, &code);
  EXPECT_TRUE(seen.empty());
  // inet refused by family: EAFNOSUPPORT at once, nothing sent.
  program = BuildSeccompProgram(
      {.enabled = true, .sockets = plan::SocketPolicy::kUnixAndNetlink, .broker_connect = true});
  ASSERT_TRUE(program) << program.error().message;
  seen = NotifiedCalls(
      *program,
      [] { return ::socket(AF_INET, SOCK_RAW, IPPROTO_ICMP) < 0 && errno == EAFNOSUPPORT ? 0 : 1; },
      &code);
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(seen.empty());
}

}  // namespace
}  // namespace cordon::linux_native
