#include "bwrap/run_captured.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::bwrap {
namespace {

std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

Result<CapturedRun> RunCaptured(const std::vector<std::string>& argv,
                                const std::vector<std::string>& envp, CapturedStream stream,
                                std::size_t limit) {
  const std::string what = fmt::format("{}", fmt::join(argv, " "));
  // A memfd, not a pipe: the helper never blocks on a full pipe while we wait for its exit.
  core::UniqueFd out(::memfd_create("cordon-bwrap-output", MFD_CLOEXEC));
  if (!out) return core::FailSyscall("memfd_create", what);
  const bool to_stdout = stream == CapturedStream::kStdout;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out.get(),
                                     to_stdout ? STDOUT_FILENO : STDERR_FILENO);
  ::posix_spawn_file_actions_addopen(&actions, to_stdout ? STDERR_FILENO : STDOUT_FILENO,
                                     "/dev/null", O_WRONLY, 0);
  std::vector<char*> args = Pointers(argv);
  std::vector<char*> env = Pointers(envp);
  pid_t pid = 0;
  const int rc =
      ::posix_spawn(&pid, argv.at(0).c_str(), &actions, nullptr, args.data(), env.data());
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return core::FailSyscall("posix_spawn", what, rc);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  CapturedRun run;
  run.exited_zero = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  run.output.resize(limit);
  const ssize_t n = ::pread(out.get(), run.output.data(), limit, 0);
  run.output.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return run;
}

}  // namespace cordon::bwrap
