// SpawnUnsandboxed: what the command sees (argv, env, cwd, stdio, descriptors, session) and how
// a failed start is reported.
#include "exec/spawn_unsandboxed.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "run_helpers.h"

namespace cordon::exec {
namespace {

using testing::MakePlan;
using testing::SpawnAndSupervise;

RunResult MustRun(const plan::LaunchPlan& plan, const SuperviseOptions& options = {}) {
  Result<RunResult> result = SpawnAndSupervise(plan, options);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  return result ? *result : RunResult{};
}

TEST(SpawnUnsandboxed, CommandSeesExactlyThePlansEnvironment) {
  ::setenv("CORDON_UNIT_CANARY", "secret", 1);
  RunResult result = MustRun(MakePlan({"env"}, {"PATH=/usr/bin:/bin", "ONLY=this"}));
  ::unsetenv("CORDON_UNIT_CANARY");
  EXPECT_EQ(result.stdout_data.data, "PATH=/usr/bin:/bin\nONLY=this\n");
}

TEST(SpawnUnsandboxed, LooksUpTheProgramInThePlansPathNotTheCallers) {
  // /usr/sbin is not in the plan's PATH, so a program only there is not found even though the
  // caller's PATH may have it; with it in the plan's PATH the same name runs.
  Result<RunResult> denied = SpawnAndSupervise(MakePlan({"true"}, {"PATH=/nonexistent"}));
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, ErrorCode::kCommandNotFound);
  EXPECT_NE(denied.error().message.find("execve(true)"), std::string::npos)
      << denied.error().message;

  Result<RunResult> allowed = SpawnAndSupervise(MakePlan({"true"}, {"PATH=/nonexistent:/bin"}));
  ASSERT_TRUE(allowed.has_value()) << allowed.error().message;
  EXPECT_EQ(allowed->status, RunStatus::kExited);
}

TEST(SpawnUnsandboxed, RunsInThePlansWorkingDirectory) {
  RunResult result = MustRun(MakePlan({"pwd"}, {"PATH=/usr/bin:/bin"}, "/usr"));
  EXPECT_EQ(result.stdout_data.data, "/usr\n");
}

TEST(SpawnUnsandboxed, MissingWorkingDirectoryFailsNamingIt) {
  Result<RunResult> result =
      SpawnAndSupervise(MakePlan({"pwd"}, {"PATH=/usr/bin:/bin"}, "/nonexistent-cordon-dir"));
  ASSERT_FALSE(result.has_value());
  EXPECT_NE(result.error().message.find("chdir(/nonexistent-cordon-dir)"), std::string::npos)
      << result.error().message;
}

TEST(SpawnUnsandboxed, StdinIsDevNullSoReadersDoNotHang) {
  SuperviseOptions options;
  options.timeout = std::chrono::seconds(10);
  RunResult result = MustRun(MakePlan({"cat"}), options);
  EXPECT_EQ(result.status, RunStatus::kExited);
  EXPECT_EQ(result.stdout_data.data, "");
}

TEST(SpawnUnsandboxed, CallersDescriptorsDoNotReachTheCommand) {
  // An inheritable descriptor of the caller (no O_CLOEXEC) must be closed in the command;
  // the twin: descriptors 0-2 are there.
  // Numbered high so it cannot coincide with the descriptor ls opens for the directory.
  const int opened = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(opened, 0);
  const int leaked = ::fcntl(opened, F_DUPFD, 50);
  ::close(opened);
  ASSERT_GE(leaked, 50);
  RunResult result = MustRun(MakePlan({"ls", "-1", "/proc/self/fd"}));
  ::close(leaked);
  std::vector<std::string> fds;
  std::istringstream lines(result.stdout_data.data);
  for (std::string line; std::getline(lines, line);) fds.push_back(line);
  EXPECT_EQ(std::count(fds.begin(), fds.end(), std::to_string(leaked)), 0)
      << result.stdout_data.data;
  for (const char* fd : {"0", "1", "2"}) {
    EXPECT_EQ(std::count(fds.begin(), fds.end(), fd), 1) << fd;
  }
}

TEST(SpawnUnsandboxed, CommandLeadsItsOwnSessionAndProcessGroup) {
  // /proc/self/stat of the command: pid, (comm), state, ppid, pgrp, session.
  RunResult result = MustRun(MakePlan({"cat", "/proc/self/stat"}));
  const std::string& stat = result.stdout_data.data;
  const std::size_t paren = stat.rfind(')');
  ASSERT_NE(paren, std::string::npos) << stat;
  std::istringstream fields(stat.substr(paren + 2));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0;
  fields >> state >> ppid >> pgrp >> session;
  const long pid = std::stol(stat);
  EXPECT_EQ(pgrp, pid);
  EXPECT_EQ(session, pid);
  EXPECT_EQ(ppid, static_cast<long>(::getpid()));
  EXPECT_NE(session, static_cast<long>(::getsid(0)));  // not the caller's session
}

TEST(SpawnUnsandboxed, RefusesAnEmptyArgv) {
  Result<RunResult> result = SpawnAndSupervise(MakePlan({}));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace cordon::exec
