// The connect broker's checks that depend on PID namespaces, run against a process in a PID
// namespace of its own (unshare(CLONE_NEWPID), with a user namespace when unprivileged):
//   - the broker is refused where /proc belongs to another PID namespace than the supervisor's
//     (the thread ids it would look up there name other tasks).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

#include "core/unique_fd.h"
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

// 0: Create refused naming /proc; 1: Create succeeded; 2: refused for another reason.
int CreateBroker() {
  Result<std::unique_ptr<ConnectBroker>> broker =
      ConnectBroker::Create(UniqueFd(::eventfd(0, EFD_CLOEXEC)), ConnectRules{});
  if (broker) return 1;
  return broker.error().message.find("/proc") != std::string::npos ? 0 : 2;
}

TEST(ConnectBrokerPidNamespace, IsCreatedWhereProcIsTheSupervisorsOwn) {
  EXPECT_EQ(CreateBroker(), 1);
}

TEST(ConnectBrokerPidNamespace, IsRefusedWhereProcBelongsToAnotherPidNamespace) {
  const int code = ExitCode(StartInNewPidNamespace([] {
    if (::getpid() != 1) return 3;  // not in the new namespace
    return CreateBroker();
  }));
  SKIP_WITHOUT_NAMESPACE(code);
  EXPECT_EQ(code, 0) << "1: brokered with another namespace's /proc; 2: refused otherwise";
}

}  // namespace
}  // namespace cordon::exec
