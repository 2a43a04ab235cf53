// The connect broker's two checks that depend on PID namespaces, each run against a process in
// a PID namespace of its own (unshare(CLONE_NEWPID), with a user namespace when unprivileged):
//   - the broker is blind where /proc belongs to another PID namespace than the supervisor's
//     (the thread ids it would look up there name other tasks): it refuses connects and lets
//     observed writes go on unexamined;
//   - an abstract socket held by a process of the command's PID namespace is taken and held, so
//     its name cannot pass to another socket between the check and the broker's connect.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "core/fd_passing.h"
#include "core/unique_fd.h"
#include "exec/abstract_owner.h"
#include "exec/connect_broker.h"
#include "support/host_files.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

constexpr int kNoNamespace = 100;  // unshare failed: the machine cannot run the test

using test_support::MustWork;

// Starts `body` as PID 1 of a new PID namespace whose /proc stays this one's (unshare -p
// without remounting /proc). Returns the intermediate child's pid; it exits with body's code,
// or kNoNamespace. `pid_out` (when given) receives the body's pid in this namespace.
pid_t StartInNewPidNamespace(const std::function<int()>& body, int pid_out = -1) {
  const pid_t outer = ::fork();
  if (outer != 0) return outer;
  const int flags = CLONE_NEWPID | (::geteuid() == 0 ? 0 : CLONE_NEWUSER);
  if (::unshare(flags) != 0) ::_exit(kNoNamespace);
  const pid_t inner = ::fork();
  if (inner < 0) ::_exit(kNoNamespace);
  if (inner == 0) ::_exit(body());
  if (pid_out >= 0) (void)!::write(pid_out, &inner, sizeof inner);
  int status = 0;
  while (::waitpid(inner, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 101);
}

int ExitCode(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define SKIP_WITHOUT_NAMESPACE(code)                                              \
  if ((code) == kNoNamespace) {                                                   \
    if (MustWork()) FAIL() << "cannot create a PID namespace here";               \
    GTEST_SKIP() << "cannot create a PID namespace here (unshare(CLONE_NEWPID))"; \
  }

// 0: created blind (connects refused, writes let through unexamined); 1: created and reading
// /proc; 2: not created.
int CreateBroker() {
  Result<std::unique_ptr<ConnectBroker>> broker =
      ConnectBroker::Create(UniqueFd(::eventfd(0, EFD_CLOEXEC)), ConnectRules{});
  if (!broker) return 2;
  return (*broker)->blind() ? 0 : 1;
}

TEST(ConnectBrokerPidNamespace, IsCreatedWhereProcIsTheSupervisorsOwn) {
  EXPECT_EQ(CreateBroker(), 1);
}

TEST(ConnectBrokerPidNamespace, IsBlindWhereProcBelongsToAnotherPidNamespace) {
  const int code = ExitCode(StartInNewPidNamespace([] {
    if (::getpid() != 1) return 3;  // not in the new namespace
    return CreateBroker();
  }));
  SKIP_WITHOUT_NAMESPACE(code);
  EXPECT_EQ(code, 0) << "1: brokered with another namespace's /proc; 2: not created";
}

// A child whose mkdir calls go to a seccomp listener (a filter of its own; the listener handed
// over through `channel`) makes `path`, exiting 0 when it was made.
pid_t StartMkdirUnderListener(const std::string& path, int channel) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
#if defined(__NR_mkdir)
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mkdir, 2, 0),
#else
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mkdirat, 2, 0),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mkdirat, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(90);
  const int listener = static_cast<int>(
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program));
  if (listener < 0 || core::SendFd(channel, listener) != 0) ::_exit(91);
  ::close(listener);
  ::_exit(::mkdir(path.c_str(), 0755) == 0 ? 0 : 1);
}

// A broker whose rules report that mkdir (Landlock, by its rules, lets the command write only
// elsewhere) services the child of StartMkdirUnderListener. Bit 0: the directory was made;
// bit 1: a denial was recorded; bit 2: the broker is blind. 100 and above: the setup failed.
int MkdirUnderBroker(const std::string& path) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return 100;
  const pid_t child = StartMkdirUnderListener(path, pair[1]);
  ::close(pair[1]);
  Result<UniqueFd> listener = core::ReceiveFd(pair[0], 0);
  ::close(pair[0]);
  if (!listener) return 101;
  ConnectRules rules;
  rules.writes.observe = true;
  rules.writes.landlock_abi = 1;
  rules.writes.landlock_writable = {"/nowhere-writable"};
  Result<std::unique_ptr<ConnectBroker>> broker =
      ConnectBroker::Create(std::move(*listener), std::move(rules));
  if (!broker) return 102;
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) != child) {
    pollfd ready{(*broker)->listener_fd(), POLLIN, 0};
    if (ready.fd >= 0 && ::poll(&ready, 1, 20) > 0) (*broker)->Service();
  }
  int code = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? 1 : 0;
  if (!(*broker)->TakeDenials().empty()) code |= 2;
  if ((*broker)->blind()) code |= 4;
  return code;
}

// Blind, the broker lets an observed write go on and reports nothing about it (what it would
// look up in /proc is another task's); its twin, reading its own /proc, reports the same call.
TEST(ConnectBrokerPidNamespace, BlindItLetsObservedWritesGoOnUnexamined) {
  char dir_template[] = "/var/tmp/cordon-blind-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  EXPECT_EQ(MkdirUnderBroker(dir + "/seen"), 1 | 2) << "made and reported";
  const int code = ExitCode(StartInNewPidNamespace([&] {
    if (::getpid() != 1) return 3;
    return MkdirUnderBroker(dir + "/unseen");
  }));
  std::error_code ignored;
  const bool made = std::filesystem::is_directory(dir + "/unseen", ignored);
  std::filesystem::remove_all(dir, ignored);
  SKIP_WITHOUT_NAMESPACE(code);
  EXPECT_EQ(code, 1 | 4) << "blind: made, nothing reported";
  EXPECT_TRUE(made);
}

sockaddr_un AbstractAddress(const std::string& name, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return addr;
}

// A socket of this process bound to the abstract `name`; invalid (errno set) when taken.
UniqueFd BindAbstract(const std::string& name) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  socklen_t len = 0;
  const sockaddr_un addr = AbstractAddress(name, &len);
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) return {};
  return fd;
}

TEST(HoldSandboxAbstractSocket, KeepsTheNameBoundToTheSandboxsSocketUntilReleased) {
  const std::string name = "cordon-hold-" + std::to_string(::getpid());
  const std::string host_name = name + "-host";
  int pid_pipe[2];
  int ready[2];
  int release[2];
  ASSERT_EQ(::pipe2(pid_pipe, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(release, O_CLOEXEC), 0);
  // The "sandbox": binds and listens on `name`, says so, waits for the word, then closes it.
  const pid_t outer = StartInNewPidNamespace(
      [&] {
        ::alarm(20);  // never outlives a test that failed before releasing it
        UniqueFd socket = BindAbstract(name);
        if (!socket || ::listen(socket.get(), 1) != 0) return 3;
        const char bound = 'b';
        if (::write(ready[1], &bound, 1) != 1) return 4;
        char word = 0;
        (void)!::read(release[0], &word, 1);
        return 0;  // the socket closes with the process
      },
      pid_pipe[1]);
  ::close(pid_pipe[1]);
  ::close(ready[1]);
  ::close(release[0]);
  UniqueFd release_write(release[1]);
  pid_t inner = -1;
  char bound = 0;
  const bool started =
      ::read(pid_pipe[0], &inner, sizeof inner) == sizeof inner && ::read(ready[0], &bound, 1) == 1;
  ::close(pid_pipe[0]);
  ::close(ready[0]);
  if (!started) {
    release_write.Reset();
    const int code = ExitCode(outer);
    SKIP_WITHOUT_NAMESPACE(code);
    FAIL() << "the sandbox process did not bind its socket (exit " << code << ")";
  }

  // The denied twin: a name bound only by a process outside the command's PID namespace.
  UniqueFd host_socket = BindAbstract(host_name);
  ASSERT_TRUE(host_socket.valid());
  EXPECT_FALSE(HoldSandboxAbstractSocket(inner, host_name).valid());

  UniqueFd held = HoldSandboxAbstractSocket(inner, name);
  ASSERT_TRUE(held.valid()) << "the sandbox's own socket was not found";
  sockaddr_un got{};
  socklen_t got_len = sizeof got;
  ASSERT_EQ(::getsockname(held.get(), reinterpret_cast<sockaddr*>(&got), &got_len), 0);
  socklen_t want_len = 0;
  const sockaddr_un want = AbstractAddress(name, &want_len);
  EXPECT_EQ(got_len, want_len);
  EXPECT_EQ(std::memcmp(got.sun_path, want.sun_path, want_len - offsetof(sockaddr_un, sun_path)),
            0);

  // The sandbox closes its socket and exits: while it is held, no one else can take the name
  // (a host process binding it now would otherwise receive the broker's connect).
  const char word = 'x';
  ASSERT_EQ(::write(release_write.get(), &word, 1), 1);
  EXPECT_EQ(ExitCode(outer), 0);
  EXPECT_FALSE(BindAbstract(name).valid()) << "the name passed on while the socket was held";
  EXPECT_EQ(errno, EADDRINUSE);
  held.Reset();
  EXPECT_TRUE(BindAbstract(name).valid()) << "released, the name is free again";
}

}  // namespace
}  // namespace cordon::exec
