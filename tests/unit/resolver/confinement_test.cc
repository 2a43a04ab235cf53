// cordon-resolver's confinement, applied in forked children: what it must still do works, and
// each thing it must not do kills it (SIGSYS) — checked from the parent, by the wait status.
#include "resolver/confinement.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

namespace cordon::resolver {
namespace {

struct Sockets {
  int sandbox = -1;   // UDP, bound on the loopback
  int client = -1;    // UDP, connected to `sandbox`: a command's lookup came from it
  int listener = -1;  // TCP, listening on the loopback, with a connection waiting
  int stream = -1;    // that connection's client end
  int channel = -1;   // one end of a seqpacket pair
  int peer = -1;
  int proxy = -1;  // TCP, listening on the loopback (the proxy's)
  sockaddr_in sandbox_address{};
};

Sockets Make() {
  Sockets s;
  s.sandbox = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  s.sandbox_address.sin_family = AF_INET;
  s.sandbox_address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(
      ::bind(s.sandbox, reinterpret_cast<sockaddr*>(&s.sandbox_address), sizeof s.sandbox_address),
      0);
  socklen_t len = sizeof s.sandbox_address;
  EXPECT_EQ(::getsockname(s.sandbox, reinterpret_cast<sockaddr*>(&s.sandbox_address), &len), 0);
  s.client = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(::connect(s.client, reinterpret_cast<sockaddr*>(&s.sandbox_address),
                      sizeof s.sandbox_address),
            0);
  const char byte = 'q';
  EXPECT_EQ(::send(s.client, &byte, 1, 0), 1);
  s.listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(s.listener, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  EXPECT_EQ(::listen(s.listener, 4), 0);
  len = sizeof any;
  EXPECT_EQ(::getsockname(s.listener, reinterpret_cast<sockaddr*>(&any), &len), 0);
  s.stream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_EQ(::connect(s.stream, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  EXPECT_EQ(::fcntl(s.stream, F_SETFL, O_NONBLOCK), 0);
  int pair[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  s.channel = pair[0];
  s.peer = pair[1];
  s.proxy = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  any.sin_port = 0;
  EXPECT_EQ(::bind(s.proxy, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  EXPECT_EQ(::listen(s.proxy, 4), 0);
  return s;
}

// Runs `act` in a confined child; its wait status. `act` returns the exit code.
int Confined(const std::function<int(const Sockets&)>& act) {
  const Sockets s = Make();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!ConfineToSockets({.datagram = s.sandbox,
                           .stream = s.listener,
                           .proxy = s.proxy,
                           .channel = s.channel})) {
      ::_exit(100);
    }
    ::_exit(act(s));
  }
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  for (const int fd : {s.sandbox, s.client, s.listener, s.stream, s.channel, s.peer, s.proxy}) {
    ::close(fd);
  }
  return status;
}

bool KilledBySeccomp(int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS; }
bool ExitedZero(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

TEST(ConfinementTest, ItsOwnWorkGoesOn) {
  const int status = Confined([](const Sockets& s) {
    const char byte = 'x';
    // The lookup read, and answered to its address; a report on the channel, and the broker's
    // reply read from it; memory as malloc takes it.
    char in = 0;
    sockaddr_in from{};
    socklen_t len = sizeof from;
    if (::recvfrom(s.sandbox, &in, 1, 0, reinterpret_cast<sockaddr*>(&from), &len) != 1) return 2;
    if (::sendto(s.sandbox, &in, 1, 0, reinterpret_cast<sockaddr*>(&from), len) != 1) return 3;
    if (::send(s.channel, &byte, 1, MSG_NOSIGNAL) != 1) return 5;
    if (::recv(s.channel, &in, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN) return 4;
    // A TCP client taken, its question read and answered.
    const int accepted = ::accept4(s.listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (accepted < 0) return 7;
    if (::send(accepted, &byte, 1, MSG_NOSIGNAL) != 1) return 8;
    if (::recv(accepted, &in, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN) return 9;
    // A socket the broker passes, received on the channel; a relayed end of file; the proxy's
    // listener polled for clients (none waits); OpenSSL's fork check.
    msghdr message{};
    iovec io{&in, 1};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    if (::recvmsg(s.channel, &message, MSG_DONTWAIT) != -1 || errno != EAGAIN) return 10;
    if (::shutdown(accepted, SHUT_WR) != 0) return 11;
    ::close(accepted);
    const int flags = SOCK_CLOEXEC | SOCK_NONBLOCK;
    if (::accept4(s.proxy, nullptr, nullptr, flags) != -1 || errno != EAGAIN) return 12;
    if (::getpid() <= 0) return 13;
    // The proxy's relay: a pipe, spliced into from a socket.
    int pipe[2];
    if (::pipe2(pipe, O_NONBLOCK | O_CLOEXEC) != 0) return 14;
    // (the byte the accepted end sent above)
    if (::splice(s.stream, nullptr, pipe[1], nullptr, 1, SPLICE_F_NONBLOCK) != 1) return 15;
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 6;
    return 0;
  });
  EXPECT_TRUE(ExitedZero(status)) << status;
}

TEST(ConfinementTest, ANewSocketKillsIt) {
  EXPECT_TRUE(KilledBySeccomp(
      Confined([](const Sockets&) { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; })));
}

TEST(ConfinementTest, TheChannelCannotBePointedElsewhere) {
  // Its twin (send without an address) works in ItsOwnWorkGoesOn.
  EXPECT_TRUE(KilledBySeccomp(Confined([](const Sockets& s) {
    const char byte = 'x';
    return ::sendto(s.channel, &byte, 1, 0, reinterpret_cast<const sockaddr*>(&s.sandbox_address),
                    sizeof s.sandbox_address) == 1
               ? 0
               : 1;
  })));
}

TEST(ConfinementTest, AnotherSocketCannotBePointedElsewhere) {
  EXPECT_TRUE(KilledBySeccomp(Confined([](const Sockets& s) {
    const char byte = 'x';
    return ::sendto(s.client, &byte, 1, 0, reinterpret_cast<const sockaddr*>(&s.sandbox_address),
                    sizeof s.sandbox_address) == 1
               ? 0
               : 1;
  })));
}

TEST(ConfinementTest, AFastOpenKillsItEvenOnTheDatagramSocket) {
  // A descriptor number is no socket's kind: a reset TCP socket at the UDP socket's number
  // could be connected anew by a fast open. Its twin (sendto without it) is ItsOwnWorkGoesOn.
  EXPECT_TRUE(KilledBySeccomp(Confined([](const Sockets& s) {
    const char byte = 'x';
    return ::sendto(s.sandbox, &byte, 1, MSG_FASTOPEN,
                    reinterpret_cast<const sockaddr*>(&s.sandbox_address),
                    sizeof s.sandbox_address) == 1
               ? 0
               : 1;
  })));
}

TEST(ConfinementTest, ADescriptorIsReceivedOnlyFromTheChannel) {
  // Its twin (recvmsg on the channel) works in ItsOwnWorkGoesOn.
  EXPECT_TRUE(KilledBySeccomp(Confined([](const Sockets& s) {
    char in = 0;
    iovec io{&in, 1};
    msghdr message{};
    message.msg_iov = &io;
    message.msg_iovlen = 1;
    return ::recvmsg(s.stream, &message, MSG_DONTWAIT) >= 0 ? 0 : 1;
  })));
}

TEST(ConfinementTest, AcceptingOnAnotherSocketKillsIt) {
  // Its twin (accept4 on the listener) works in ItsOwnWorkGoesOn.
  EXPECT_TRUE(KilledBySeccomp(Confined(
      [](const Sockets& s) { return ::accept4(s.channel, nullptr, nullptr, 0) >= 0 ? 0 : 1; })));
}

TEST(ConfinementTest, OpeningAFileKillsIt) {
  EXPECT_TRUE(KilledBySeccomp(
      Confined([](const Sockets&) { return ::open("/etc/hostname", O_RDONLY) >= 0 ? 0 : 1; })));
}

TEST(ConfinementTest, DuplicatingADescriptorKillsIt) {
  EXPECT_TRUE(KilledBySeccomp(
      Confined([](const Sockets& s) { return ::dup2(s.channel, 100) >= 0 ? 0 : 1; })));
}

TEST(ConfinementTest, ExecutableMemoryKillsIt) {
  EXPECT_TRUE(KilledBySeccomp(Confined([](const Sockets&) {
    void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return page == MAP_FAILED ? 1 : 0;
  })));
}

TEST(ConfinementTest, RunningAProgramKillsIt) {
  EXPECT_TRUE(KilledBySeccomp(Confined([](const Sockets&) {
    char* argv[] = {const_cast<char*>("true"), nullptr};
    ::execv("/bin/true", argv);
    return 1;
  })));
}

}  // namespace
}  // namespace cordon::resolver
