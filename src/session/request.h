// Turning a CommandRequest into what the policy and the planner need: the text the policy
// judges, the argv that runs, and the canonical working directory. Checks the request's shape
// before anything is started.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"

namespace cordon::session {

// The text the policy evaluates: the shell text as given, or the argv shell-quoted (so the
// policy sees exactly the words that will run). Fails when the request does not have exactly
// one of argv and shell_text, or the shell text is empty.
[[nodiscard]] Result<std::string> PolicyText(const CommandRequest& request);

// The argv that runs: argv as given, or {"/bin/sh", "-c", text}.
std::vector<std::string> CommandArgv(const CommandRequest& request);

// The canonical working directory: the workspace when `cwd` is empty; a relative `cwd` is taken
// relative to the workspace. Must exist and lie inside the (canonical) workspace after
// symlinks are resolved.
[[nodiscard]] Result<std::filesystem::path> ResolveCwd(const std::filesystem::path& cwd,
                                                       const std::filesystem::path& workspace);

// The effective wall-clock limit: the request's override (which must be positive) or the
// session's.
[[nodiscard]] Result<std::chrono::milliseconds> EffectiveTimeout(
    const CommandRequest& request, std::chrono::milliseconds session_timeout);

// The caller's environment ("NAME=value"), read from environ at call time.
std::vector<std::string> CallerEnvironment();

// The caller's real home: $HOME when set and absolute, else the passwd entry of the real uid.
// Empty when neither is known.
std::filesystem::path CallerHome();
// The passwd entry's home directory of the real uid; empty when there is none.
std::filesystem::path PasswdHome();

}  // namespace cordon::session
