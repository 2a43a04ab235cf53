#include "core/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::core {
namespace {

struct Pair {
  UniqueFd a;
  UniqueFd b;
};

Pair SeqpacketPair() {
  int fds[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Same device and inode: the received descriptor is the sent file.
bool SameFile(int x, int y) {
  struct stat sx {};
  struct stat sy {};
  return ::fstat(x, &sx) == 0 && ::fstat(y, &sy) == 0 && sx.st_dev == sy.st_dev &&
         sx.st_ino == sy.st_ino;
}

TEST(FdPassing, ASentDescriptorArrivesAsTheSameFileAndCloseOnExec) {
  Pair pair = SeqpacketPair();
  UniqueFd file(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file.valid());
  ASSERT_EQ(SendFd(pair.a.get(), file.get()), 0);
  Result<UniqueFd> got = ReceiveFd(pair.b.get(), MSG_DONTWAIT);
  ASSERT_TRUE(got.has_value()) << got.error().message;
  EXPECT_NE(got->get(), file.get());
  EXPECT_TRUE(SameFile(got->get(), file.get()));
  EXPECT_EQ(::fcntl(got->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

TEST(FdPassing, NothingQueuedFailsNamingRecvmsg) {
  Pair pair = SeqpacketPair();
  Result<UniqueFd> got = ReceiveFd(pair.b.get(), MSG_DONTWAIT);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().errno_value, EAGAIN);
  EXPECT_NE(got.error().message.find("recvmsg"), std::string::npos) << got.error().message;
}

TEST(FdPassing, AByteWithoutADescriptorIsRefused) {
  Pair pair = SeqpacketPair();
  ASSERT_EQ(::send(pair.a.get(), "F", 1, 0), 1);
  Result<UniqueFd> got = ReceiveFd(pair.b.get(), MSG_DONTWAIT);
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().errno_value, EBADMSG) << got.error().message;
}

TEST(FdPassing, AClosedSenderIsAnErrorNotAnEmptyDescriptor) {
  Pair pair = SeqpacketPair();
  pair.a.Reset();
  Result<UniqueFd> got = ReceiveFd(pair.b.get());
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().errno_value, EPIPE) << got.error().message;
}

TEST(FdPassing, SendingToAClosedPeerReturnsEpipeWithoutASignal) {
  Pair pair = SeqpacketPair();
  pair.b.Reset();
  UniqueFd file(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(SendFd(pair.a.get(), file.get()), EPIPE);  // a SIGPIPE would end the test binary
}

}  // namespace
}  // namespace cordon::core
