#include "seatbelt/probe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

namespace cordon::seatbelt {
namespace {

// Exit status of ARGV run with an empty environment and stdio on /dev/null (the denied touch
// complains, which is expected and must not reach the caller's terminal); -1 when it could
// not start.
int RunQuiet(const std::vector<std::string>& argv) {
  std::vector<char*> words;
  for (const std::string& w : argv) words.push_back(const_cast<char*>(w.c_str()));
  words.push_back(nullptr);
  char* envp[] = {nullptr};
  posix_spawn_file_actions_t actions;
  if (::posix_spawn_file_actions_init(&actions) != 0) return -1;
  for (const int fd : {0, 1, 2}) {
    (void)::posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  }
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, words[0], &actions, nullptr, words.data(), envp);
  (void)::posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

Result<void> ProbeSeatbelt(const std::filesystem::path& scratch,
                           const std::filesystem::path& sandbox_exec) {
  const std::string tool = sandbox_exec.string();
  if (::access(tool.c_str(), X_OK) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} is missing or not executable: the Seatbelt backend cannot run "
                            "here",
                            tool));
  }
  std::error_code ec;
  std::filesystem::create_directories(scratch / "allowed", ec);
  if (ec) {
    return Fail(ErrorCode::kSystem, fmt::format("seatbelt probe: mkdir {}: {}",
                                                (scratch / "allowed").string(), ec.message()));
  }
  SeatbeltPolicy policy;
  policy.writable = {scratch / "allowed"};
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  const std::string allowed = (scratch / "allowed" / "probe").string();
  const std::string denied = (scratch / "denied-probe").string();
  auto argv = [&](const std::string& target) {
    std::vector<std::string> words = SandboxExecArgv(profile, {"/usr/bin/touch", target});
    words.front() = tool;
    return words;
  };
  const int allowed_rc = RunQuiet(argv(allowed));
  const int denied_rc = RunQuiet(argv(denied));
  const bool denied_landed = ::access(denied.c_str(), F_OK) == 0;
  if (allowed_rc != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} could not run an allowed write (exit {}): Seatbelt unusable", tool,
                            allowed_rc));
  }
  if (denied_rc == 0 || denied_landed) {
    return Fail(
        ErrorCode::kUnavailable,
        fmt::format("{} ran but did not enforce a denied write: refusing to rely on it", tool));
  }
  return {};
}

}  // namespace cordon::seatbelt
