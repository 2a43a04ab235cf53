// Runs a binary (the cordon CLI) as a child process with a chosen environment and directory and
// collects its exit code, stdout and stderr. Test-only helper.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cordon::test_support {

struct Outcome {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

struct Invocation {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // complete environment ("NAME=value")
  std::filesystem::path cwd;
  std::string stdin_data;
  // Runs the binary under a seccomp filter that refuses unshare/clone with CLONE_NEWUSER (as
  // Docker's default profile does for an unprivileged container) and clone3 (ENOSYS, so libc
  // falls back to clone, whose flags the filter can see).
  bool refuse_user_namespaces = false;
};

Outcome RunBinary(const Invocation& invocation);

}  // namespace cordon::test_support
