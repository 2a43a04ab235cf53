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

struct Pipe {
  UniqueFd read_end;
  UniqueFd write_end;
};

Pipe MakePipe() {
  int fds[2] = {-1, -1};
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

TEST(CloseLaterTest, ADescriptorHandedOverIsClosed) {
  Pipe p = MakePipe();
  CloseLater(std::move(p.write_end));
  WaitForClosed();
  EXPECT_TRUE(HungUp(p.read_end.get(), 0));
}

TEST(CloseLaterTest, ADescriptorNotHandedOverStaysOpen) {
  Pipe kept = MakePipe();
  // Another one goes through the closer meanwhile: only it is closed.
  Pipe other = MakePipe();
  CloseLater(std::move(other.write_end));
  WaitForClosed();
  EXPECT_TRUE(HungUp(other.read_end.get(), 0));
  EXPECT_FALSE(HungUp(kept.read_end.get(), 50));
  EXPECT_NE(::fcntl(kept.write_end.get(), F_GETFD), -1);
}

TEST(CloseLaterTest, ManyAreAllClosedAndAnInvalidOneIsIgnored) {
  CloseLater(UniqueFd());
  std::vector<UniqueFd> read_ends;
  for (int i = 0; i < 64; ++i) {
    Pipe p = MakePipe();
    read_ends.push_back(std::move(p.read_end));
    CloseLater(std::move(p.write_end));
  }
  WaitForClosed();
  for (const UniqueFd& r : read_ends) EXPECT_TRUE(HungUp(r.get(), 0));
}

}  // namespace
}  // namespace cordon::core
