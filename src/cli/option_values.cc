#include "cli/option_values.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace cordon::cli {

std::optional<double> ParseSeconds(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::uint64_t> ParseCount(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> ParseSize(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])) != 0) {
    ++digits;
  }
  const std::optional<std::uint64_t> number = ParseCount(text.substr(0, digits));
  if (!number) return std::nullopt;
  std::string unit;
  for (char c : text.substr(digits)) unit += static_cast<char>(std::tolower(c));
  if (unit.ends_with("ib")) {
    unit.resize(unit.size() - 2);
  } else if (unit.size() == 2 && unit.back() == 'b') {
    unit.pop_back();
  }
  int shift = 0;
  if (unit == "k") {
    shift = 10;
  } else if (unit == "m") {
    shift = 20;
  } else if (unit == "g") {
    shift = 30;
  } else if (unit == "t") {
    shift = 40;
  } else if (!unit.empty() && unit != "b") {
    return std::nullopt;
  }
  if (*number > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return *number << shift;
}

CLI::Validator SecondsValue(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        const std::optional<double> seconds = ParseSeconds(text);
        if (seconds && *seconds > 0 && *seconds <= max) return {};
        return fmt::format(
            "expected a number of seconds greater than 0 and at most {}, found "
            "\"{}\"",
            max, text);
      },
      "", "seconds");
}

CLI::Validator CountValue() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (ParseCount(text)) return {};
        return fmt::format("expected a whole number, found \"{}\"", text);
      },
      "", "count");
}

CLI::Validator SizeValue() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const std::optional<std::uint64_t> bytes = ParseSize(text);
        if (!bytes) {
          return fmt::format(
              "expected a size in bytes such as 512M, 2G or 1073741824 (units K, "
              "M, G, T: powers of 1024), found \"{}\"",
              text);
        }
        text = std::to_string(*bytes);
        return {};
      },
      "", "size");
}

}  // namespace cordon::cli
