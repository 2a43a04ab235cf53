// A temporary main repository with one commit and a linked worktree beside it, made with the
// real git (tests skip when git is missing).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace cordon::worktree::testing {

inline std::string Quote(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

class RepoFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("git --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
    char pattern[] = "/tmp/cordon-worktree-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    base_ = std::filesystem::canonical(pattern);
    main_ = base_ / "main";
    linked_ = base_ / "linked";
    // Identity for the commits RunGit makes (it passes these four variables through).
    ::setenv("GIT_AUTHOR_NAME", "Cordon Test", 1);
    ::setenv("GIT_AUTHOR_EMAIL", "test@cordon.invalid", 1);
    ::setenv("GIT_COMMITTER_NAME", "Cordon Test", 1);
    ::setenv("GIT_COMMITTER_EMAIL", "test@cordon.invalid", 1);
    Git(base_, "init -q -b main " + Quote(main_));
    Write(main_ / "README", "hello\n");
    Git(main_, "add README");
    Git(main_, "commit -q -m initial");
    Git(main_, "worktree add -q -b feature " + Quote(linked_));
  }
  void TearDown() override {
    if (!base_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(base_, ec);
    }
  }

 public:  // the helpers are also used by free functions in the tests
  static void Git(const std::filesystem::path& dir, const std::string& args) {
    const std::string command = "git -C " + Quote(dir) + " " + args + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  static std::string GitOut(const std::filesystem::path& dir, const std::string& args) {
    const std::string command = "git -C " + Quote(dir) + " " + args + " 2>/dev/null";
    std::string out;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
      char buffer[256];
      while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
      ::pclose(pipe);
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  static void Write(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
  }

 protected:
  std::filesystem::path base_;
  std::filesystem::path main_;
  std::filesystem::path linked_;
};

}  // namespace cordon::worktree::testing
