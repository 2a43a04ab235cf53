#include "core/close_later.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <vector>

namespace cordon::core {
namespace {

// The read end of a pipe sees the hang-up once every write end is closed.
bool HungUp(int read_end, int timeout_ms) {
  pollfd p{read_end, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLHUP) != 0;
}

TEST(CloseLaterTest, ADescriptorHandedOverIsClosed) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd read_end(fds[0]);
  CloseLater(UniqueFd(fds[1]));
  WaitForClosed();
  EXPECT_TRUE(HungUp(read_end.get(), 0));
}

TEST(CloseLaterTest, ADescriptorNotHandedOverStaysOpen) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd read_end(fds[0]);
  UniqueFd write_end(fds[1]);
  // Another one goes through the closer meanwhile: only it is closed.
  int other[2];
  ASSERT_EQ(::pipe2(other, O_CLOEXEC), 0);
  UniqueFd other_read(other[0]);
  CloseLater(UniqueFd(other[1]));
  WaitForClosed();
  EXPECT_TRUE(HungUp(other_read.get(), 0));
  EXPECT_FALSE(HungUp(read_end.get(), 50));
  EXPECT_NE(::fcntl(write_end.get(), F_GETFD), -1);
}

TEST(CloseLaterTest, ManyAreAllClosedAndAnInvalidOneIsIgnored) {
  CloseLater(UniqueFd());
  std::vector<UniqueFd> read_ends;
  for (int i = 0; i < 64; ++i) {
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read_ends.emplace_back(fds[0]);
    CloseLater(UniqueFd(fds[1]));
  }
  WaitForClosed();
  for (const UniqueFd& r : read_ends) EXPECT_TRUE(HungUp(r.get(), 0));
}

}  // namespace
}  // namespace cordon::core
