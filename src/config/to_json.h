// Config -> its JSON form, the inverse of ParseConfigText: keys in the canonical (documented)
// order, every key written (the file then shows the whole effective configuration), two-space
// indentation, a final newline. ParseConfigText(ToJson(c)) == c for every valid, normalised c.
#pragma once

#include <string>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// Strings that are not valid UTF-8 (a path can be any bytes) are written with U+FFFD in their
// place; ToJsonChecked refuses them instead, so that a write never changes a value silently.
std::string ToJson(const Config& config);
[[nodiscard]] Result<std::string> ToJsonChecked(const Config& config);

}  // namespace cordon::config
