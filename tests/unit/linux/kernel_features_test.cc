// The probe on this machine, and the kernel ABI constants cordon defines itself.
#include "linux/kernel_features.h"

#include <gtest/gtest.h>
#include <linux/landlock.h>
#include <sys/syscall.h>

#include <cstdlib>
#include <string>

#include "linux/system_headers/landlock.h"
#include "linux/system_headers/syscalls.h"
#include "sandbox_runner.h"
#include "support/host_files.h"

namespace cordon::linux_native {
namespace {

using test_support::MustWork;

#define CORDON_EXPECT_FEATURE(cond, what)                                          \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      if (MustWork()) FAIL() << what << " missing: " << testing::Features().notes; \
      GTEST_SKIP() << what << " missing here: " << testing::Features().notes;      \
    }                                                                              \
  } while (0)

TEST(KernelFeatures, NamespacesAreConsistent) {
  const KernelFeatures& f = testing::Features();
  // Nothing below the user namespace is reported when it is missing.
  if (!f.user_namespace) {
    EXPECT_FALSE(f.mount_namespace || f.pid_namespace || f.net_namespace || f.proc_mount);
  }
  if (f.proc_mount) {
    EXPECT_TRUE(f.mount_namespace && f.pid_namespace);
  }
  CORDON_EXPECT_FEATURE(f.namespaces_usable(), "user+mount+pid namespaces");
  EXPECT_TRUE(f.net_namespace);
}

TEST(KernelFeatures, LandlockAndSeccompAreProbed) {
  const KernelFeatures& f = testing::Features();
  CORDON_EXPECT_FEATURE(f.seccomp, "seccomp");
  CORDON_EXPECT_FEATURE(f.landlock_abi >= 6, "Landlock ABI >= 6");
  EXPECT_LE(f.landlock_abi, 64);
  EXPECT_TRUE(f.pidfd);
}

TEST(KernelFeatures, ProbingTwiceGivesTheSameAnswer) {
  KernelFeatures again = ProbeKernel();
  const KernelFeatures& first = testing::Features();
  EXPECT_EQ(again.user_namespace, first.user_namespace);
  EXPECT_EQ(again.landlock_abi, first.landlock_abi);
  EXPECT_EQ(again.proc_mount, first.proc_mount);
  EXPECT_EQ(again.mount_setattr, first.mount_setattr);
}

TEST(SystemHeaders, LandlockValuesMatchTheInstalledHeaderWhereItHasThem) {
  EXPECT_EQ(sys::kAccessFsExecute, LANDLOCK_ACCESS_FS_EXECUTE);
  EXPECT_EQ(sys::kAccessFsMakeSym, LANDLOCK_ACCESS_FS_MAKE_SYM);
  EXPECT_EQ(sys::kAccessFsRefer, LANDLOCK_ACCESS_FS_REFER);
  EXPECT_EQ(sys::kLandlockCreateRulesetVersion, LANDLOCK_CREATE_RULESET_VERSION);
  EXPECT_EQ(sys::kLandlockRulePathBeneath, LANDLOCK_RULE_PATH_BENEATH);
  EXPECT_EQ(sizeof(sys::LandlockPathBeneathAttr), sizeof(landlock_path_beneath_attr));
  EXPECT_EQ(sys::kNrLandlockCreateRuleset, SYS_landlock_create_ruleset);
  EXPECT_EQ(sys::kNrMountSetattr, SYS_mount_setattr);
  EXPECT_EQ(sys::kNrPidfdOpen, SYS_pidfd_open);
  EXPECT_EQ(sys::kNrCloseRange, SYS_close_range);
}

TEST(SystemHeaders, NewerLandlockValuesAreTheDocumentedOnes) {
  EXPECT_EQ(sys::kAccessFsTruncate, 1ULL << 14);
  EXPECT_EQ(sys::kAccessFsIoctlDev, 1ULL << 15);
  EXPECT_EQ(sys::kAccessNetBindTcp, 1ULL << 0);
  EXPECT_EQ(sys::kAccessNetConnectTcp, 1ULL << 1);
  EXPECT_EQ(sys::kScopeAbstractUnixSocket, 1ULL << 0);
  EXPECT_EQ(sys::kScopeSignal, 1ULL << 1);
  EXPECT_EQ(sizeof(sys::LandlockNetPortAttr), 16u);
  EXPECT_EQ(sys::RulesetAttrSize(1), 8u);
  EXPECT_EQ(sys::RulesetAttrSize(4), 16u);
  EXPECT_EQ(sys::RulesetAttrSize(7), 24u);
}

TEST(SystemHeaders, WriteRightsGrowWithTheAbiAndNeverIncludeReads) {
  for (int abi = 1; abi <= 7; ++abi) {
    std::uint64_t w = sys::WriteFsAccess(abi);
    EXPECT_EQ(w & (sys::kAccessFsReadFile | sys::kAccessFsReadDir | sys::kAccessFsExecute), 0u);
    EXPECT_NE(w & sys::kAccessFsWriteFile, 0u);
    EXPECT_EQ(w & sys::WriteFsAccess(abi + 1), w);
  }
  EXPECT_EQ(sys::WriteFsAccess(1) & sys::kAccessFsRefer, 0u);
  EXPECT_NE(sys::WriteFsAccess(2) & sys::kAccessFsRefer, 0u);
  EXPECT_EQ(sys::WriteFsAccess(0), 0u);
}

TEST(SystemHeaders, TheKernelAcceptsTheRulesetSizeForItsAbi) {
  const KernelFeatures& f = testing::Features();
  CORDON_EXPECT_FEATURE(f.landlock_abi >= 1, "Landlock");
  sys::LandlockRulesetAttr attr{sys::WriteFsAccess(f.landlock_abi), 0, 0};
  if (f.landlock_abi >= 4) attr.handled_access_net = sys::kAccessNetConnectTcp;
  if (f.landlock_abi >= 6) attr.scoped = sys::kScopeSignal;
  long fd = sys::LandlockCreateRuleset(&attr, sys::RulesetAttrSize(f.landlock_abi), 0);
  ASSERT_GE(fd, 0) << "landlock_create_ruleset rejected cordon's struct";
  ::close(static_cast<int>(fd));
  // Twin: a right the kernel does not know is refused, so the ABI clamp matters.
  attr.handled_access_fs = 1ULL << 40;
  EXPECT_LT(sys::LandlockCreateRuleset(&attr, sys::RulesetAttrSize(f.landlock_abi), 0), 0);
}

}  // namespace
}  // namespace cordon::linux_native
