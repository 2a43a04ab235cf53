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

// The accepted values of an integer limit. zero_means_none: 0 is also accepted ("no limit").
struct CountRange {
  std::uint64_t min;
  std::uint64_t max;
  bool zero_means_none;
  const char* unit;
};
inline constexpr CountRange kOutputBytesRange{kMinOutputBytes, kMaxOutputBytes, false, "bytes"};
// Below 4 MiB not even a shell starts; 1 TiB is far above any machine this runs on.
inline constexpr CountRange kMemoryBytesRange{std::uint64_t{4} << 20, std::uint64_t{1} << 40, true,
                                              "bytes"};
// pid_max can be at most 2^22 (PID_MAX_LIMIT).
inline constexpr CountRange kProcessesRange{1, std::uint64_t{1} << 22, true, "processes"};
// 3: stdin, stdout and stderr; 2^20 is the kernel's default fs.nr_open.
inline constexpr CountRange kOpenFilesRange{3, std::uint64_t{1} << 20, true, "descriptors"};
inline constexpr CountRange kCpuSecondsRange{1, 86400 * 7, true, "seconds"};
// Below a writable root, how deep nested projects are searched for (0: not at all).
inline constexpr CountRange kNestedProjectDepthRange{0, 8, false, "levels"};

constexpr bool InRange(std::uint64_t value, const CountRange& range) {
  return (value == 0 && range.zero_means_none) || (value >= range.min && value <= range.max);
}

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
