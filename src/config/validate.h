// Checks on a typed Config that need more than the JSON shape: regexes compile under RE2,
// environment names are names, paths are absolute, limits are in range. Run after reading a
// file, after command-line overrides and after an edit, so that every Config cordon uses or
// writes has passed the same rules.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

inline constexpr double kMaxTimeoutSeconds = 86400;  // one day
inline constexpr std::uint64_t kMinOutputBytes = 1024;
inline constexpr std::uint64_t kMaxOutputBytes = std::uint64_t{1} << 30;  // 1 GiB

// Seconds (> 0, finite) -> milliseconds, rounded to the nearest, at least 1 ms.
std::chrono::milliseconds TimeoutFromSeconds(double seconds);

// [A-Za-z_][A-Za-z0-9_]*
bool IsValidEnvironmentName(std::string_view name);

// kConfig errors of the form "SOURCE: /pointer: ..." where the pointer is the place in the
// JSON form of `config` (the same as in the file, since NormalisePaths keeps list order).
[[nodiscard]] Result<void> ValidateConfig(const Config& config, std::string_view source);

// Compiles `pattern` with RE2 (errors not logged); the RE2 error text on failure.
[[nodiscard]] Result<void> CheckPattern(std::string_view pattern);

}  // namespace cordon::config
