// Turns the paths of a Config, as a person wrote them, into the form the sandbox needs:
// "~" expanded with the HOME passed in, relative paths refused, writable roots resolved with
// realpath (the kernel matches real paths: a root reached through a symlink would otherwise
// cover the wrong tree), duplicates removed.
#pragma once

#include <filesystem>
#include <string_view>

#include "config/env.h"
#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// A writable root: expanded, absolute, existing, canonical, not "/". Bare kConfig message on
// failure (callers add source and pointer).
[[nodiscard]] Result<std::filesystem::path> ResolveWritableRoot(std::string_view text,
                                                                const Env& env);

// A hidden path: expanded, absolute, lexically normal, not "/". It need not exist (a
// credential directory that appears later must still be hidden by the planner).
[[nodiscard]] Result<std::filesystem::path> ResolveHiddenPath(std::string_view text,
                                                              const Env& env);

// Resolves config.sandbox.writable_roots and hidden_paths in place and drops repeats (first
// occurrence kept). Errors point at the entry as written: "SOURCE: /sandbox/writable_roots/2:".
// Idempotent: resolving a resolved Config changes nothing.
[[nodiscard]] Result<void> NormalisePaths(Config& config, const Env& env, std::string_view source);

}  // namespace cordon::config
