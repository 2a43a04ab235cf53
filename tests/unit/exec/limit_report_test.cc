// RunResult::limit and limits_reached for the limits the supervisor itself enforces.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "run_helpers.h"

namespace cordon::exec {
namespace {

using ::testing::ElementsAre;
using testing::MakePlan;
using testing::SpawnAndSupervise;

TEST(LimitReport, ATimeoutIsTheLimitThatEndedTheCommand) {
  SuperviseOptions options;
  options.timeout = std::chrono::milliseconds(200);
  Result<RunResult> r = SpawnAndSupervise(MakePlan({"/bin/sleep", "30"}), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->status, RunStatus::kTimedOut);
  EXPECT_EQ(r->limit, RunLimit::kTimeout);
  EXPECT_THAT(r->limits_reached, ElementsAre(RunLimit::kTimeout));
}

TEST(LimitReport, AnOutputFloodIsCutButDoesNotEndTheCommand) {
  SuperviseOptions options;
  options.output_cap = 4096;
  Result<RunResult> r =
      SpawnAndSupervise(MakePlan({"/bin/sh", "-c", "head -c 1000000 /dev/zero; exit 7"}), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->status, RunStatus::kExited);
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->stdout_data.total_bytes, 1000000u);
  EXPECT_LE(r->stdout_data.data.size(), 4096u + 200u);  // head + marker + tail
  EXPECT_EQ(r->limit, RunLimit::kNone);
  EXPECT_THAT(r->limits_reached, ElementsAre(RunLimit::kOutput));
}

TEST(LimitReport, ACommandWithinItsLimitsReachesNone) {
  Result<RunResult> r = SpawnAndSupervise(MakePlan({"/bin/sh", "-c", "echo hi"}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->limit, RunLimit::kNone);
  EXPECT_TRUE(r->limits_reached.empty());
}

TEST(LimitReport, SigxcpuCountsAsTheCpuLimitOnlyWhenOneWasSet) {
  SuperviseOptions options;
  Result<RunResult> r = SpawnAndSupervise(MakePlan({"/bin/sh", "-c", "kill -XCPU $$"}), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->status, RunStatus::kSignaled);
  EXPECT_EQ(r->limit, RunLimit::kNone);
  options.cpu_limited = true;
  r = SpawnAndSupervise(MakePlan({"/bin/sh", "-c", "kill -XCPU $$"}), options);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->limit, RunLimit::kCpu);
}

}  // namespace
}  // namespace cordon::exec
