// Runs git on the host, outside the sandbox, for worktree mode's git_commit.
//
// Always argv (never a shell string), in a minimal environment: no GIT_* variable from the
// caller (GIT_DIR, GIT_INDEX_FILE, GIT_CONFIG_* would redirect or reconfigure git) except the
// four identity ones. Every invocation disables hooks (core.hooksPath=/dev/null) and the
// fsmonitor (core.fsmonitor=false would otherwise be a program git starts), since the
// sandboxed command controlled the worktree's contents.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::worktree {

struct GitOutput {
  int exit_code = 0;
  std::string out;
  std::string err;
};

struct GitRunOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  // Readable: kill git at once (as a cancelled tools/call does). -1: none.
  int cancel_fd = -1;
};

// The environment git runs with, picked from `caller_env` ("NAME=value" entries).
std::vector<std::string> GitEnvironment(const std::vector<std::string>& caller_env);

// The full argv: git -C <worktree> <hardening -c options> <args...>.
std::vector<std::string> GitArgv(const std::filesystem::path& worktree,
                                 const std::vector<std::string>& args);

// Runs git and waits. An error when git could not start, was killed, timed out or was
// cancelled; a git that exited (with any code) is a GitOutput.
[[nodiscard]] Result<GitOutput> RunGit(const std::filesystem::path& worktree,
                                       const std::vector<std::string>& args,
                                       const GitRunOptions& options = {});

}  // namespace cordon::worktree
