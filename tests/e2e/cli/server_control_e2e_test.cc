// `cordon serve --status` and `--stop` (src/server/control.h): found at the socket, named by
// the kernel, stopped through a pidfd; what a client says of a server it does not use.
#include <signal.h>
#include <sys/wait.h>

#include "server_fixture.h"

namespace cordon::e2e {
namespace {

TEST_F(ServerTest, StatusNamesTheRunningServerAndStopEndsIt) {
  // None yet: exit 3, and --stop has nothing to do.
  Outcome none = Run({"serve", "--status"});
  EXPECT_EQ(none.exit_code, 3) << none.out << none.err;
  EXPECT_NE(none.out.find("no run server is running"), std::string::npos) << none.out;
  EXPECT_EQ(Run({"serve", "--stop"}).exit_code, 0);

  StartServer();
  Outcome status = Run({"serve", "--status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("pid " + std::to_string(server_->pid())), std::string::npos)
      << status.out;
  // Looking is no request: the server logs no bad one, and still serves.
  EXPECT_EQ(ServerLog().find("bad request"), std::string::npos) << ServerLog();
  EXPECT_EQ(Run({"run", "--", "echo", "served"}).out, "served\n");

  Outcome stop = Run({"serve", "--stop"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_NE(stop.out.find("stopped the run server (pid " + std::to_string(server_->pid())),
            std::string::npos)
      << stop.out;
  // It exited by itself on SIGTERM (the fixture reaps it; 0: a clean exit).
  int wait_status = 0;
  ASSERT_EQ(::waitpid(server_->pid(), &wait_status, 0), server_->pid());
  server_->Forget();
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
  EXPECT_EQ(Run({"serve", "--status"}).exit_code, 3);
  EXPECT_EQ(Run({"serve", "--status", "--stop"}).exit_code, 125);
}

}  // namespace
}  // namespace cordon::e2e
