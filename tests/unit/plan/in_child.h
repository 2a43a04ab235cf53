// Runs part of a test in a forked child, for steps that change process-wide state the test
// process must keep (user and mount namespaces, mounts, the planner's process-wide caches).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <functional>

namespace cordon::plan {

// The exit code a body returns when the machine lacks what it needs (no user namespace): the
// caller skips.
inline constexpr int kChildSkipped = 77;

// `body`'s return value as the child's exit code; -1 when the child did not exit normally.
inline int ExitCodeInChild(const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) ::_exit(body());
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace cordon::plan
