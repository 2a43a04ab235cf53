#include "seatbelt/probe.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "seatbelt/profile.h"

namespace cordon::seatbelt {
namespace {

#if defined(__APPLE__)
// Exit status of ARGV run with an empty environment; -1 when it could not start.
int RunQuiet(const std::vector<std::string>& argv) {
  std::vector<char*> words;
  for (const std::string& w : argv) words.push_back(const_cast<char*>(w.c_str()));
  words.push_back(nullptr);
  char* envp[] = {nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, words[0], nullptr, nullptr, words.data(), envp) != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif

}  // namespace

Result<void> ProbeSeatbelt([[maybe_unused]] const std::filesystem::path& scratch) {
#if defined(__APPLE__)
  if (::access(kSandboxExec, X_OK) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} is missing: the Seatbelt backend cannot run here", kSandboxExec));
  }
  SeatbeltPolicy policy;
  policy.writable = {scratch / "allowed"};
  std::filesystem::create_directories(scratch / "allowed");
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  const std::string allowed = (scratch / "allowed" / "probe").string();
  const std::string denied = (scratch / "denied-probe").string();
  const int allowed_rc = RunQuiet(SandboxExecArgv(profile, {"/usr/bin/touch", allowed}));
  const int denied_rc = RunQuiet(SandboxExecArgv(profile, {"/usr/bin/touch", denied}));
  const bool denied_landed = ::access(denied.c_str(), F_OK) == 0;
  if (allowed_rc != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} could not run an allowed write (exit {}): Seatbelt unusable",
                            kSandboxExec, allowed_rc));
  }
  if (denied_rc == 0 || denied_landed) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} ran but did not enforce a denied write: refusing to rely on it",
                            kSandboxExec));
  }
  return {};
#else
  return Fail(ErrorCode::kUnavailable, "Seatbelt (sandbox-exec) exists only on macOS");
#endif
}

}  // namespace cordon::seatbelt
