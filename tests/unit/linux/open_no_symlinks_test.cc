// OpenNoSymlinks: a planned (canonical) path opens; one with a symlink anywhere in it is ELOOP,
// through openat2 and through the component walk used where openat2 is refused with ENOSYS
// (inside cordon's own sandbox). Each case runs in a forked child; the walk's under a seccomp
// filter that refuses openat2 as cordon's does.
#include "linux/open_no_symlinks.h"

#include <gtest/gtest.h>
#include <seccomp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace cordon::linux_native {
namespace {

// 0: `path` opened; 1: ELOOP; 2: anything else. In a child, openat2 refused when `walk`.
int OpenedInChild(const std::filesystem::path& path, bool walk) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (walk) {
      scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
      if (ctx == nullptr || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(openat2), 0) ||
          seccomp_load(ctx) != 0) {
        ::_exit(3);
      }
    }
    const int fd = OpenNoSymlinks(path.c_str());
    ::_exit(fd >= 0 ? 0 : errno == ELOOP ? 1 : 2);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class OpenNoSymlinksTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/cordon-nosym-XXXXXX";
    ASSERT_NE(::mkdtemp(templ), nullptr);
    dir_ = std::filesystem::canonical(templ);
    std::filesystem::create_directories(dir_ / "real/inner");
    std::filesystem::create_directory_symlink(dir_ / "real", dir_ / "link");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_P(OpenNoSymlinksTest, OpensACanonicalPathAndRefusesALinkAnywhereInIt) {
  EXPECT_EQ(OpenedInChild(dir_ / "real/inner", GetParam()), 0);
  EXPECT_EQ(OpenedInChild(dir_ / "link/inner", GetParam()), 1) << "a link in the middle";
  EXPECT_EQ(OpenedInChild(dir_ / "link", GetParam()), 1) << "a link at the end";
  EXPECT_EQ(OpenedInChild(dir_ / "missing", GetParam()), 2);
}

INSTANTIATE_TEST_SUITE_P(Ways, OpenNoSymlinksTest, ::testing::Values(false, true),
                         [](const auto& param) { return param.param ? "Walk" : "Openat2"; });

}  // namespace
}  // namespace cordon::linux_native
