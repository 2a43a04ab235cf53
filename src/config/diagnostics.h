// Building the messages of configuration errors. Every message has the same shape so that a
// person (or an agent) can find the problem without guessing:
//
//   SOURCE: /json/pointer: expected WHAT, found WHAT
//
// SOURCE is the file name (or "command line"); the pointer is RFC 6901, so it also names array
// elements (/command_policy/deny/3).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::config {

// Error{kConfig, "SOURCE: POINTER: MESSAGE"} (the pointer part is left out when empty).
[[nodiscard]] Error ConfigError(std::string_view source, std::string_view pointer,
                                std::string_view message);
[[nodiscard]] inline std::unexpected<Error> FailConfig(std::string_view source,
                                                       std::string_view pointer,
                                                       std::string_view message) {
  return std::unexpected<Error>(ConfigError(source, pointer, message));
}

// Appends one reference token to a JSON pointer, escaping "~" and "/" as RFC 6901 requires.
std::string PointerAppend(std::string_view pointer, std::string_view token);
std::string PointerAppend(std::string_view pointer, std::size_t index);

// A short, quoted description of a JSON value for "found ...": strings are shown as JSON string
// literals (escaped, shortened), scalars as themselves, containers by kind.
std::string DescribeJson(const nlohmann::json& value);

// A string shown as an escaped JSON literal, shortened past `max_chars`. Control characters and
// terminal escapes in a hostile config file must not reach the user's terminal raw.
std::string Quote(std::string_view text, std::size_t max_chars = 80);

// `"a", "b", "c"` — for "expected one of ...".
std::string QuoteList(std::span<const std::string_view> names);

// The known name closest to `name` by edit distance when it is close enough to be a likely
// typo; empty otherwise.
std::string_view ClosestName(std::string_view name, std::span<const std::string_view> known);

}  // namespace cordon::config
