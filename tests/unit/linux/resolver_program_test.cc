// How cordon-resolver is handed to a network-by-domain run (linux/resolver_program.h): a sealed
// copy in memory, so that writing to the file afterwards changes nothing that runs, and never a
// file the run itself may write. Each refusal has its twin.
#include "linux/resolver_program.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace cordon::linux_native {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ResolverProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory only its owner may write (a trusted place for the copy): under the caller's
    // HOME, as /tmp is writable by everyone.
    const char* home = ::getenv("HOME");
    ASSERT_NE(home, nullptr);
    std::string pattern = std::string(home) + "/cordon-resolver-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << pattern;
    dir_ = pattern;
    program_ = dir_ / "cordon-resolver";
    fs::copy_file(CORDON_RESOLVER_PATH, program_);
    SetResolverPath(program_);
  }
  void TearDown() override {
    SetResolverPath({});
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  fs::path program_;
};

TEST_F(ResolverProgramTest, WhatRunsIsASealedCopyThatWritingTheFileDoesNotChange) {
  const std::string original = ReadAll(program_);
  const Result<int> fd = ResolverProgramFor(plan::LaunchPlan{});
  ASSERT_TRUE(fd) << fd.error().message;
  const int seals = ::fcntl(*fd, F_GET_SEALS);
  ASSERT_GE(seals, 0) << "not a memfd";
  EXPECT_EQ(seals & (F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL),
            F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
  // The file rewritten in place (the same inode): the copy keeps the checked bytes.
  {
    std::ofstream out(program_, std::ios::binary | std::ios::in);
    out << "#!/bin/sh\necho subverted\n";
  }
  ASSERT_NE(ReadAll(program_), original);
  EXPECT_EQ(ReadAll("/proc/self/fd/" + std::to_string(*fd)), original);
  // Nor can the copy itself be written.
  const int writable = ::open(("/proc/self/fd/" + std::to_string(*fd)).c_str(), O_WRONLY);
  if (writable >= 0) {
    EXPECT_LT(::write(writable, "x", 1), 0);
    ::close(writable);
  }
}

TEST_F(ResolverProgramTest, AResolverTheRunMayWriteIsRefused) {
  plan::LaunchPlan writes_it;
  writes_it.mounts.push_back({plan::MountOpKind::kBindWritable, dir_});
  const Result<int> refused = ResolverProgramFor(writes_it);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(refused.error().message.find("which this run may write"), std::string::npos)
      << refused.error().message;
  // The twin: a run writing elsewhere gets it.
  plan::LaunchPlan elsewhere;
  elsewhere.mounts.push_back({plan::MountOpKind::kBindWritable, dir_.parent_path() / "other"});
  EXPECT_TRUE(ResolverProgramFor(elsewhere));
}

TEST_F(ResolverProgramTest, AMissingResolverRefusesWithTheFix) {
  SetResolverPath(dir_ / "absent");
  const Result<int> refused = ResolverProgramFor(plan::LaunchPlan{});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("install cordon-resolver"), std::string::npos)
      << refused.error().message;
  // The twin: the staged one is found again.
  SetResolverPath(program_);
  EXPECT_TRUE(ResolverProgramFor(plan::LaunchPlan{}));
}

}  // namespace
}  // namespace cordon::linux_native
