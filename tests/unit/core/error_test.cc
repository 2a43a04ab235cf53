#include "cordon/error.h"

#include <gtest/gtest.h>

#include "cordon/run.h"
#include "core/syscall_error.h"

namespace cordon {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return Fail(ErrorCode::kInvalidArgument, "odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  CORDON_TRY(int half, Half(x));
  CORDON_TRY(int quarter, Half(half));
  return quarter;
}

TEST(Error, TryPropagatesTheFirstError) {
  EXPECT_EQ(Quarter(8).value(), 2);
  auto odd = Quarter(6);
  ASSERT_FALSE(odd.has_value());
  EXPECT_EQ(odd.error().message, "odd");
}

TEST(Error, SyscallErrorNamesCallArgumentsAndErrno) {
  Error e = core::SyscallError("open", "/x", ENOENT);
  EXPECT_EQ(e.code, ErrorCode::kSystem);
  EXPECT_EQ(e.errno_value, ENOENT);
  EXPECT_EQ(e.message, "open(/x): No such file or directory");
}

TEST(RunResult, CliExitCodesFollowTheDocumentedConvention) {
  RunResult r;
  r.status = RunStatus::kExited;
  r.exit_code = 3;
  EXPECT_EQ(r.CliExitCode(), 3);
  r.status = RunStatus::kTimedOut;
  EXPECT_EQ(r.CliExitCode(), 124);
  r.status = RunStatus::kSetupFailed;
  EXPECT_EQ(r.CliExitCode(), 125);
  r.status = RunStatus::kDenied;
  EXPECT_EQ(r.CliExitCode(), 126);
  r.status = RunStatus::kSignaled;
  r.signal = 9;
  EXPECT_EQ(r.CliExitCode(), 137);
}

}  // namespace
}  // namespace cordon
