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

#include "core/unique_fd.h"

namespace cordon::seatbelt {
namespace {

constexpr std::size_t kMaxStderr = 2048;

struct Outcome {
  int exit_code = -1;  // -1: could not start, or killed by a signal
  std::string stderr_text;
};

// Runs ARGV with an empty environment, stdin and stdout on /dev/null and stderr kept (the
// denied touch complains, which is expected and must not reach the caller's terminal; a
// sandbox-exec that fails says why there).
Outcome RunCapturing(const std::vector<std::string>& argv) {
  Outcome out;
  std::vector<char*> words;
  for (const std::string& w : argv) words.push_back(const_cast<char*>(w.c_str()));
  words.push_back(nullptr);
  char* envp[] = {nullptr};
  int fds[2] = {-1, -1};
  if (::pipe(fds) != 0) return out;
  core::UniqueFd read_end(fds[0]);
  core::UniqueFd write_end(fds[1]);
  (void)::fcntl(read_end.get(), F_SETFD, FD_CLOEXEC);   // no pipe2 on macOS
  (void)::fcntl(write_end.get(), F_SETFD, FD_CLOEXEC);  // dup2 clears it on the child's 2
  posix_spawn_file_actions_t actions;
  if (::posix_spawn_file_actions_init(&actions) != 0) return out;
  for (const int fd : {0, 1}) {
    (void)::posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
  }
  (void)::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, words[0], &actions, nullptr, words.data(), envp);
  (void)::posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (spawned != 0) return out;
  char buffer[512];
  for (;;) {
    const ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.stderr_text.size() < kMaxStderr) {
      out.stderr_text.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n),
                                                           kMaxStderr - out.stderr_text.size()));
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// sandbox-exec's own complaint on one line, control characters replaced.
std::string OneLine(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "no message" : out;
}

std::vector<std::string> ArgvFor(const std::filesystem::path& sandbox_exec,
                                 const SeatbeltProfile& profile,
                                 const std::vector<std::string>& command) {
  std::vector<std::string> words = SandboxExecArgv(profile, command);
  words.front() = sandbox_exec.string();
  return words;
}

}  // namespace

std::string ExplainSandboxExecFailure(const std::filesystem::path& sandbox_exec, int exit_code,
                                      const std::string& stderr_text) {
  const std::string tool = sandbox_exec.string();
  const std::string said = OneLine(stderr_text);
  if (exit_code == kSandboxExecApplyFailed &&
      stderr_text.find("sandbox_apply") != std::string::npos) {
    return fmt::format(
        "{} could not apply cordon's profile (exit 71: \"{}\"): this process already runs "
        "inside a sandbox that forbids applying another (an agent's own Seatbelt sandbox, such "
        "as Codex's or Claude Code's) (fix: start cordon outside that sandbox, e.g. let the "
        "agent run cordon's MCP server or hook unsandboxed and cordon confine the commands)",
        tool, said);
  }
  if (exit_code == kSandboxExecProfileRefused) {
    return fmt::format(
        "{} refused cordon's profile (exit 65: \"{}\"): this macOS does not accept a rule "
        "cordon writes (fix: report it with the output of `cordon doctor`; meanwhile use "
        "sandbox.mode off knowingly, or another machine)",
        tool, said);
  }
  return fmt::format("{} failed before running the command (exit {}: \"{}\")", tool, exit_code,
                     said);
}

Result<void> CheckProfileApplies(const std::filesystem::path& sandbox_exec,
                                 const SeatbeltProfile& profile) {
  const Outcome run = RunCapturing(ArgvFor(sandbox_exec, profile, {"/usr/bin/true"}));
  if (run.exit_code == 0) return {};
  return Fail(ErrorCode::kUnavailable,
              ExplainSandboxExecFailure(sandbox_exec, run.exit_code, run.stderr_text));
}

std::string FailsAlike(const std::filesystem::path& sandbox_exec, const SeatbeltProfile& profile,
                       int exit_code) {
  const Outcome run = RunCapturing(ArgvFor(sandbox_exec, profile, {"/usr/bin/true"}));
  if (run.exit_code != exit_code || !run.stderr_text.starts_with("sandbox-exec:")) return {};
  // sandbox-exec says so too when it cannot start the program (a process limit, say): that
  // proves nothing about the profile, nor about the command that did run.
  if (run.stderr_text.find("execvp") != std::string::npos) return {};
  if (exit_code == kSandboxExecApplyFailed &&
      run.stderr_text.find("sandbox_apply") == std::string::npos) {
    return {};
  }
  return ExplainSandboxExecFailure(sandbox_exec, run.exit_code, run.stderr_text);
}

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
  // Every kind of rule cordon writes, with the network allowed and denied: a profile this
  // macOS would not compile (or a sandbox that forbids applying one) is found here, once.
  for (const SeatbeltPolicy& variant : ProbeVariants(scratch)) {
    CORDON_TRY_VOID(CheckProfileApplies(sandbox_exec, RenderSeatbelt(variant)));
  }
  SeatbeltPolicy policy;
  policy.writable = {scratch / "allowed"};
  const SeatbeltProfile profile = RenderSeatbelt(policy);
  const std::string allowed = (scratch / "allowed" / "probe").string();
  const std::string denied = (scratch / "denied-probe").string();
  const Outcome allowed_run =
      RunCapturing(ArgvFor(sandbox_exec, profile, {"/usr/bin/touch", allowed}));
  const Outcome denied_run =
      RunCapturing(ArgvFor(sandbox_exec, profile, {"/usr/bin/touch", denied}));
  const bool denied_landed = ::access(denied.c_str(), F_OK) == 0;
  if (allowed_run.exit_code != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("{} could not run an allowed write (exit {}: \"{}\"): Seatbelt "
                            "unusable",
                            tool, allowed_run.exit_code, OneLine(allowed_run.stderr_text)));
  }
  if (denied_run.exit_code == 0 || denied_landed) {
    return Fail(
        ErrorCode::kUnavailable,
        fmt::format("{} ran but did not enforce a denied write: refusing to rely on it", tool));
  }
  return {};
}

}  // namespace cordon::seatbelt
