// A private directory tree in the test's temporary directory, for the host scans that decide by
// mode bits alone (the root-only walk of /etc and its watch). Removed after the test.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace cordon::plan {

class PrivateTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "cordon-tree.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  // An empty file or directory at `name` below the root, then chmod'ed to `mode` exactly.
  void File(const std::string& name, mode_t mode) {
    const std::filesystem::path path = root_ / name;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << path;
    ::close(fd);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }
  void Dir(const std::string& name, mode_t mode) {
    const std::filesystem::path path = root_ / name;
    ASSERT_EQ(::mkdir(path.c_str(), 0700), 0) << path;
    ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
  }

  std::filesystem::path root_;
};

}  // namespace cordon::plan
