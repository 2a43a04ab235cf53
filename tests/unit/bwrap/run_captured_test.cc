#include "bwrap/run_captured.h"

#include <gtest/gtest.h>

namespace cordon::bwrap {
namespace {

const std::vector<std::string> kBothStreams = {"/bin/sh", "-c", "echo out; echo err >&2"};

TEST(RunCaptured, KeepsStdoutAndDropsStderrWhenAskedForStdout) {
  Result<CapturedRun> run = RunCaptured(kBothStreams, {}, CapturedStream::kStdout, 64);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_TRUE(run->exited_zero);
  EXPECT_EQ(run->output, "out\n");
}

TEST(RunCaptured, KeepsStderrAndDropsStdoutWhenAskedForStderr) {
  Result<CapturedRun> run = RunCaptured(kBothStreams, {}, CapturedStream::kStderr, 64);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_EQ(run->output, "err\n");
}

TEST(RunCaptured, KeepsOnlyTheFirstLimitBytes) {
  Result<CapturedRun> run =
      RunCaptured({"/bin/sh", "-c", "echo 0123456789"}, {}, CapturedStream::kStdout, 4);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_EQ(run->output, "0123");
}

TEST(RunCaptured, PassesOnlyTheGivenEnvironment) {
  Result<CapturedRun> run = RunCaptured({"/bin/sh", "-c", "echo \"$ONLY:${HOME:-unset}\""},
                                        {"ONLY=this"}, CapturedStream::kStdout, 64);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_EQ(run->output, "this:unset\n");
}

TEST(RunCaptured, ANonZeroExitIsReportedAndAMissingBinaryIsAnError) {
  Result<CapturedRun> failed =
      RunCaptured({"/bin/sh", "-c", "exit 3"}, {}, CapturedStream::kStdout, 64);
  ASSERT_TRUE(failed.has_value()) << failed.error().message;
  EXPECT_FALSE(failed->exited_zero);
  Result<CapturedRun> missing =
      RunCaptured({"/nonexistent/bwrap", "--version"}, {}, CapturedStream::kStdout, 64);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("posix_spawn"), std::string::npos)
      << missing.error().message;
}

}  // namespace
}  // namespace cordon::bwrap
