// The front's trust check (src/front/trust.h): its status parser agrees with the run server's
// (server/peer.h) on real and sample texts and fails closed on damaged ones; a server process
// is trusted only when it is no more confined than the front and runs the expected executable.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "front/trust.h"
#include "nolibc/sys.h"
#include "server/peer.h"

namespace cordon::front {
using namespace nolibc;  // NOLINT: the system calls
namespace {

std::string ReadText(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FrontParseStatus, AgreesWithTheServersParserOnThisProcess) {
  const std::string status = ReadText("/proc/self/status");
  const Confinement front = ParseStatus(status.c_str());
  Result<server::Confinement> server = server::ParseStatus(status);
  ASSERT_TRUE(server.has_value()) << server.error().message;
  ASSERT_TRUE(front.known);
  EXPECT_EQ(front.uid, static_cast<long>(server->uid));
  EXPECT_EQ(front.no_new_privs != 0, server->no_new_privs);
  EXPECT_EQ(front.seccomp_filters, server->seccomp_filters);
  EXPECT_EQ(front.pid_namespace_depth, server->pid_namespace_depth);
}

TEST(FrontParseStatus, ReadsTheSecondUidAndCountsTheNamespaces) {
  const Confinement c = ParseStatus(
      "Name:\tx\nUid:\t1000\t1001\t1000\t1000\nNSpid:\t4242\t2\t1\nNoNewPrivs:\t1\n"
      "Seccomp:\t2\nSeccomp_filters:\t3\n");
  ASSERT_TRUE(c.known);
  EXPECT_EQ(c.uid, 1001);
  EXPECT_EQ(c.no_new_privs, 1);
  EXPECT_EQ(c.seccomp_filters, 3);
  EXPECT_EQ(c.pid_namespace_depth, 3);
}

TEST(FrontParseStatus, AMissingOrDamagedFieldIsUnknown) {
  // No Seccomp_filters (a kernel before 5.9), a one-field Uid, a word instead of a number, a
  // field name that only starts like one: never known, so never trusted.
  EXPECT_FALSE(ParseStatus("Uid:\t0\t0\t0\t0\nNSpid:\t1\nNoNewPrivs:\t0\n").known);
  EXPECT_FALSE(ParseStatus("Uid:\t0\nNSpid:\t1\nNoNewPrivs:\t0\nSeccomp_filters:\t0\n").known);
  EXPECT_FALSE(
      ParseStatus("Uid:\t0\tx\t0\t0\nNSpid:\t1\nNoNewPrivs:\t0\nSeccomp_filters:\t0\n").known);
  EXPECT_FALSE(
      ParseStatus("Uid:\t0\t0\t0\t0\nNSpidx:\t1\nNoNewPrivs:\t0\nSeccomp_filters:\t0\n").known);
  EXPECT_FALSE(ParseStatus("").known);
}

// A child that listens on an abstract socket (after no_new_privs when `confined`) until killed;
// the test connects to it as the front connects to a server.
class ListeningChild {
 public:
  explicit ListeningChild(bool confined) {
    name_ = "cordon-front-test-" + std::to_string(::getpid()) + (confined ? "-c" : "-u");
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (confined) ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
      const sockaddr_un a = Address();
      if (::bind(s, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(s, 4) != 0) {
        ::_exit(1);
      }
      (void)::write(ready[1], "r", 1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char c;
    EXPECT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
  }
  ~ListeningChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  int Connect() const {
    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_un a = Address();
    EXPECT_EQ(::connect(s, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
    return s;
  }

 private:
  sockaddr_un Address() const {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, name_.data(), name_.size());
    return a;
  }
  std::string name_;
  pid_t pid_ = -1;
};

struct statx OwnExecutable() {
  struct statx st {};
  EXPECT_EQ(Statx(AT_FDCWD, "/proc/self/exe", 0, &st), 0);
  return st;
}

Confinement Own() { return ParseStatus(ReadText("/proc/self/status").c_str()); }

TEST(FrontServerIsTrusted, AnUnconfinedServerOfTheSameExecutableIsTrusted) {
  ListeningChild server(/*confined=*/false);
  const int s = server.Connect();
  EXPECT_TRUE(ServerIsTrusted(s, Own(), OwnExecutable()));
  ::close(s);
}

TEST(FrontServerIsTrusted, AServerOfAnotherExecutableIsNot) {
  ListeningChild server(/*confined=*/false);
  const int s = server.Connect();
  struct statx other {};
  ASSERT_EQ(Statx(AT_FDCWD, "/bin/sh", 0, &other), 0);
  EXPECT_FALSE(ServerIsTrusted(s, Own(), other));
  ::close(s);
}

TEST(FrontServerIsTrusted, AServerMoreConfinedThanTheFrontIsNot) {
  if (Own().no_new_privs != 0) GTEST_SKIP() << "this test already runs with no_new_privs";
  ListeningChild server(/*confined=*/true);
  const int s = server.Connect();
  EXPECT_FALSE(ServerIsTrusted(s, Own(), OwnExecutable()));
  ::close(s);
}

TEST(FrontServerIsTrusted, AnUnknownOwnConfinementTrustsNobody) {
  ListeningChild server(/*confined=*/false);
  const int s = server.Connect();
  EXPECT_FALSE(ServerIsTrusted(s, Confinement{}, OwnExecutable()));
  ::close(s);
}

}  // namespace
}  // namespace cordon::front
