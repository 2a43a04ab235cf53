// Small file helpers for cgroupfs: whole-file reads and writes with the call in the message,
// and the "key value" lines of *.events / memory.oom_control.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::limits {

[[nodiscard]] Result<std::string> ReadSmallFile(const std::filesystem::path& path);
// open(O_WRONLY) + one write(); cgroupfs takes each write as one command.
[[nodiscard]] Result<void> WriteSmallFile(const std::filesystem::path& path, std::string_view text);
// The value of `key` in "key value\n" lines, if present.
std::optional<std::uint64_t> KeyedValue(std::string_view text, std::string_view key);
// Random hex suffix for per-run cgroup names (getrandom).
std::string RandomSuffix();

}  // namespace cordon::limits
