#include "limits/limits_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cordon::limits {
namespace {

using ::testing::HasSubstr;

LimitsSupport NoCgroups(bool nproc = false) {
  LimitsSupport s;
  s.cgroups.notes = "memory: no cgroup hierarchy with this controller is mounted";
  s.nproc_per_user_namespace = nproc;
  return s;
}

LimitsSupport V1Cgroups() {
  LimitsSupport s;
  s.cgroups.memory = {CgroupVersion::kV1, "/sys/fs/cgroup/memory/me"};
  s.cgroups.pids = {CgroupVersion::kV1, "/sys/fs/cgroup/pids"};
  return s;
}

TEST(PlanLimits, UnsetLimitsNeverRefuseAndNeedNoCgroup) {
  Result<LimitsPlan> plan = PlanLimits(LimitsConfig{}, NoCgroups(), false);
  ASSERT_TRUE(plan.has_value());
  EXPECT_FALSE(plan->needs_cgroup());
  EXPECT_EQ(plan->rlimits.open_files, 0u);
  EXPECT_EQ(plan->rlimits.processes, 0u);
}

TEST(PlanLimits, MemoryLimitUsesTheCgroupWhenThereIsOne) {
  LimitsConfig config;
  config.memory_bytes = 64 << 20;
  Result<LimitsPlan> plan = PlanLimits(config, V1Cgroups(), true);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->cgroup.memory_bytes, 64u << 20);
  EXPECT_TRUE(plan->needs_cgroup());
}

TEST(PlanLimits, MemoryLimitWithoutACgroupIsRefusedNamingTheFix) {
  LimitsConfig config;
  config.memory_bytes = 64 << 20;
  Result<LimitsPlan> plan = PlanLimits(config, NoCgroups(true), true);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(plan.error().message, HasSubstr("limits.memory_bytes"));
  EXPECT_THAT(plan.error().message, HasSubstr("cgroup memory controller"));
  EXPECT_THAT(plan.error().message, HasSubstr("remove limits.memory_bytes"));
}

TEST(PlanLimits, ProcessLimitPrefersThePidsCgroupWhichHoldsOnlyTheCommand) {
  LimitsConfig config;
  config.processes = 64;
  Result<LimitsPlan> plan = PlanLimits(config, V1Cgroups(), true);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->cgroup.pids_max, 64u);
  EXPECT_EQ(plan->rlimits.processes, 0u);
}

TEST(PlanLimits, ProcessLimitFallsBackToNprocInAUserNamespace) {
  LimitsConfig config;
  config.processes = 64;
  Result<LimitsPlan> plan = PlanLimits(config, NoCgroups(/*nproc=*/true), /*user_namespace=*/true);
  ASSERT_TRUE(plan.has_value());
  EXPECT_FALSE(plan->needs_cgroup());
  EXPECT_EQ(plan->rlimits.processes, 65u);  // the sandbox's init counts too
}

TEST(PlanLimits, ProcessLimitWithoutCgroupOrUserNamespaceIsRefused) {
  LimitsConfig config;
  config.processes = 64;
  // RLIMIT_NPROC outside a user namespace of our own would count all of the user's processes.
  Result<LimitsPlan> plan = PlanLimits(config, NoCgroups(true), /*user_namespace=*/false);
  ASSERT_FALSE(plan.has_value());
  EXPECT_THAT(plan.error().message, HasSubstr("limits.processes"));
  // Global root: the kernel ignores RLIMIT_NPROC (probe says so).
  EXPECT_FALSE(PlanLimits(config, NoCgroups(false), true).has_value());
}

TEST(PlanLimits, OpenFilesAndCpuAreAlwaysRlimits) {
  LimitsConfig config;
  config.open_files = 256;
  config.cpu_seconds = 30;
  Result<LimitsPlan> plan = PlanLimits(config, NoCgroups(), false);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->rlimits.open_files, 256u);
  EXPECT_EQ(plan->rlimits.cpu_seconds, 30u);
}

TEST(DescribeLimits, AgreesWithPlanLimitsOnWhatCanBeEnforced) {
  for (const LimitsSupport& support : {NoCgroups(), NoCgroups(true), V1Cgroups()}) {
    for (bool userns : {false, true}) {
      LimitsConfig config;
      config.memory_bytes = 64 << 20;
      config.processes = 10;
      std::vector<LimitEnforcement> described = DescribeLimits(config, support, userns);
      ASSERT_EQ(described.size(), 6u);
      bool all_enforceable = true;
      for (const LimitEnforcement& l : described) all_enforceable &= !l.mechanism.empty();
      EXPECT_EQ(all_enforceable, PlanLimits(config, support, userns).has_value());
    }
  }
}

TEST(DescribeLimits, UnsetLimitsAreNotEnforcedButNameTheirMechanism) {
  std::vector<LimitEnforcement> described = DescribeLimits(LimitsConfig{}, V1Cgroups(), true);
  EXPECT_EQ(described[2].name, "memory_bytes");
  EXPECT_FALSE(described[2].enforced);
  EXPECT_THAT(described[2].mechanism, HasSubstr("cgroup v1 memory.limit_in_bytes"));
  EXPECT_EQ(described[0].name, "timeout_seconds");
  EXPECT_TRUE(described[0].enforced);
}

}  // namespace
}  // namespace cordon::limits
