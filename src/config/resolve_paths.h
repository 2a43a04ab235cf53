// Turns the paths of a Config, as a person wrote them, into the form the sandbox needs:
// "~" expanded with the HOME passed in, relative paths refused, writable roots checked through
// realpath (they must exist, and reach neither "/" nor a kernel interface) but kept as named:
// a session resolves each when it starts (the kernel matches real paths) and refuses one named
// through a link a sandboxed command could have made (decision 0033); duplicates removed.
#pragma once

#include <filesystem>
#include <string_view>

#include "config/env.h"
#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// A writable root: expanded, absolute, lexically normal, and existing; what it reaches is not
// "/", /proc or /sys. Bare kConfig message on failure (callers add source and pointer).
[[nodiscard]] Result<std::filesystem::path> ResolveWritableRoot(std::string_view text,
                                                                const Env& env);

// A hidden path: expanded, absolute, lexically normal, not "/". It need not exist (a
// credential directory that appears later must still be hidden by the planner).
[[nodiscard]] Result<std::filesystem::path> ResolveHiddenPath(std::string_view text,
                                                              const Env& env);

// A readable path (sandbox.readable_paths): "~" expanded, lexically normal, absolute; "/" and
// the home itself are refused (either would undo the hidden home it is an exception to).
[[nodiscard]] Result<std::filesystem::path> ResolveReadablePath(std::string_view text,
                                                                const Env& env);

// Resolves config.sandbox.writable_roots and hidden_paths in place and drops repeats (first
// occurrence kept). Errors point at the entry as written: "SOURCE: /sandbox/writable_roots/2:".
// Idempotent: resolving a resolved Config changes nothing.
[[nodiscard]] Result<void> NormalisePaths(Config& config, const Env& env, std::string_view source);

}  // namespace cordon::config
