// ProbeCgroups against a fake /proc/self and fake cgroup hierarchies in a temporary directory:
// the discovery logic without touching the machine's cgroups.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "limits/cgroup.h"
#include "limits/cgroup_files.h"

namespace cordon::limits {
namespace {

namespace fs = std::filesystem;

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cordon-cgprobe-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "proc");
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  fs::path root_;
};

TEST_F(FakeProc, FindsAV1MemoryHierarchyBelowTheProcesssOwnCgroup) {
  const fs::path mount = root_ / "cg mem";
  fs::create_directories(mount / "svc" / "me");
  Write(root_ / "proc/mountinfo", "30 25 0:26 / " + (root_ / "cg\\040mem").string() +
                                      " rw,relatime shared:9 - cgroup cgroup rw,memory\n");
  Write(root_ / "proc/cgroup", "4:memory:/svc/me\n1:name=systemd:/\n");
  CgroupSupport support = ProbeCgroups(root_ / "proc");
  EXPECT_EQ(support.memory.version, CgroupVersion::kV1);
  EXPECT_EQ(support.memory.parent, mount / "svc" / "me");
  EXPECT_EQ(support.pids.version, CgroupVersion::kNone);
  EXPECT_NE(support.notes.find("pids"), std::string::npos) << support.notes;
  // The probe's test cgroup is gone again.
  EXPECT_EQ(std::distance(fs::directory_iterator(mount / "svc" / "me"), {}), 0);
}

TEST_F(FakeProc, AV1HierarchyWithoutTheControllerIsNotUsed) {
  fs::create_directories(root_ / "cpu");
  Write(root_ / "proc/mountinfo",
        "30 25 0:26 / " + (root_ / "cpu").string() + " rw - cgroup cgroup rw,cpu,cpuacct\n");
  Write(root_ / "proc/cgroup", "2:cpu,cpuacct:/\n");
  CgroupSupport support = ProbeCgroups(root_ / "proc");
  EXPECT_EQ(support.memory.version, CgroupVersion::kNone);
  EXPECT_EQ(support.pids.version, CgroupVersion::kNone);
}

TEST_F(FakeProc, FindsAV2ParentAsRootOrAsADelegatedUser) {
  const fs::path mount = root_ / "unified";
  Write(mount / "cgroup.controllers", "cpu memory pids\n");
  Write(mount / "cgroup.subtree_control", "memory pids\n");
  Write(mount / "cordon.slice/cgroup.subtree_control", "memory pids\n");
  Write(mount / "user/cgroup.subtree_control", "memory pids\n");
  Write(mount / "user/cgroup.procs", "");
  fs::create_directories(mount / "user/me.scope");
  Write(root_ / "proc/mountinfo",
        "40 25 0:30 / " + mount.string() + " rw - cgroup2 cgroup2 rw,nsdelegate\n");
  Write(root_ / "proc/cgroup", "0::/user/me.scope\n");
  CgroupSupport support = ProbeCgroups(root_ / "proc");
  const fs::path expected = ::geteuid() == 0 ? mount / "cordon.slice" : mount / "user";
  EXPECT_EQ(support.memory.version, CgroupVersion::kV2);
  EXPECT_EQ(support.memory.parent, expected);
  EXPECT_EQ(support.pids.parent, expected);
}

TEST_F(FakeProc, AV2HierarchyWhoseControllersAreBoundToV1IsNotUsedForThem) {
  const fs::path mount = root_ / "unified";
  Write(mount / "cgroup.controllers", "hugetlb\n");
  Write(root_ / "proc/mountinfo", "40 25 0:30 / " + mount.string() + " rw - cgroup2 cgroup2 rw\n");
  Write(root_ / "proc/cgroup", "0::/\n");
  CgroupSupport support = ProbeCgroups(root_ / "proc");
  EXPECT_EQ(support.memory.version, CgroupVersion::kNone);
  EXPECT_EQ(support.pids.version, CgroupVersion::kNone);
  EXPECT_FALSE(support.notes.empty());
}

TEST(CgroupFiles, KeyedValueReadsEventCounters) {
  const std::string events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n";
  EXPECT_EQ(KeyedValue(events, "oom_kill"), 1u);
  EXPECT_EQ(KeyedValue(events, "max"), 12u);
  EXPECT_EQ(KeyedValue(events, "oom_group_kill"), std::nullopt);
  EXPECT_EQ(KeyedValue("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"), 3u);
}

}  // namespace
}  // namespace cordon::limits
