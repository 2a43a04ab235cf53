// Checks of numeric command-line values, in cordon's own words: CLI11 would say "Could not
// convert: --timeout = abc" or list its size units. Each is a CLI::Validator that runs on the
// text before CLI11 converts it; a bad value stops the parse with "--flag: expected ..., found
// ..." (exit 125, as any bad flag).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cordon::cli {

// A number of seconds, greater than 0 and at most `max` (fractions allowed: 2.5).
CLI::Validator SecondsValue(double max);

// A whole number (0 allowed: "no limit" where the flag says so).
CLI::Validator CountValue();

// A size in bytes: digits, optionally with a unit K, M, G or T (powers of 1024; KiB, MB and
// the like mean the same), any case. The text is replaced by the number of bytes.
CLI::Validator SizeValue();

// The parts the validators use, for tests: nullopt when the text is not one.
std::optional<double> ParseSeconds(std::string_view text);
std::optional<std::uint64_t> ParseCount(std::string_view text);
std::optional<std::uint64_t> ParseSize(std::string_view text);

}  // namespace cordon::cli
