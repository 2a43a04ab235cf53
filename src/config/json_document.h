// Text -> nlohmann::json, strictly: RFC 8259 only (no comments, no trailing commas), valid UTF-8,
// and no key repeated inside one object (nlohmann would silently keep the last one, so
// {"mode": "read_only", "mode": "off"} would read as "off" while a person reads "read_only").
// This is the only place the config module calls into nlohmann's throwing parser.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "cordon/error.h"

namespace cordon::config {

// Largest config text accepted; a real config is a few hundred bytes.
inline constexpr std::size_t kMaxConfigBytes = 1024 * 1024;

// kConfig errors: "SOURCE:LINE:COLUMN: invalid JSON: ..." for syntax errors,
// "SOURCE: /pointer: key "x" appears more than once" for repeated keys.
[[nodiscard]] Result<nlohmann::json> ParseJsonDocument(std::string_view text,
                                                       std::string_view source);

}  // namespace cordon::config
