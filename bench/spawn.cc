#include "spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cordon::bench {

SpawnStats SpawnAndWait(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  SpawnStats stats;
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return stats;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, a[0], &actions, nullptr, a.data(), e.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return stats;
  }
  static thread_local char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n > 0) {
      stats.stdout_bytes += static_cast<std::uint64_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(out[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  stats.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  stats.max_rss_kib = usage.ru_maxrss;
  return stats;
}

}  // namespace cordon::bench
