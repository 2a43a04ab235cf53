// The broker's one pure decision: whether a path, as the command sees it, lies beneath one of
// the writable areas. The kernel tests (tests/kernel/late_socket_test.cc) check the rest from
// outside the sandbox.
#include "exec/connect_broker.h"

#include <gtest/gtest.h>

namespace cordon::exec {
namespace {

const std::vector<std::string> kAreas = {"/work/ws", "/tmp/", "/var/tmp"};

TEST(ConnectBroker, APathInsideAWritableAreaIsBeneathIt) {
  EXPECT_TRUE(ConnectBroker::IsBeneath("/work/ws/app.sock", kAreas));
  EXPECT_TRUE(ConnectBroker::IsBeneath("/work/ws/a/b/c.sock", kAreas));
  EXPECT_TRUE(ConnectBroker::IsBeneath("/tmp/.cordon-home/agent.sock", kAreas));
  EXPECT_TRUE(ConnectBroker::IsBeneath("/var/tmp/x.sock (deleted)", kAreas));
}

TEST(ConnectBroker, APathOutsideOrBesideAWritableAreaIsNot) {
  EXPECT_FALSE(ConnectBroker::IsBeneath("/work/ws2/app.sock", kAreas));  // a sibling prefix
  EXPECT_FALSE(ConnectBroker::IsBeneath("/work/app.sock", kAreas));
  EXPECT_FALSE(ConnectBroker::IsBeneath("/run/docker.sock", kAreas));
  EXPECT_FALSE(ConnectBroker::IsBeneath("/tmpx/app.sock", kAreas));
  EXPECT_FALSE(ConnectBroker::IsBeneath("relative/app.sock", kAreas));
  EXPECT_FALSE(ConnectBroker::IsBeneath("", kAreas));
}

TEST(ConnectBroker, TheRootDirectoryIsNeverAWritableArea) {
  EXPECT_FALSE(ConnectBroker::IsBeneath("/run/docker.sock", {"/"}));
  EXPECT_FALSE(ConnectBroker::IsBeneath("/home/u/.ssh/agent.sock", {"", "//"}));
}

}  // namespace
}  // namespace cordon::exec
