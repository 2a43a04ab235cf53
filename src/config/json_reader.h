// Parsed JSON -> typed Config: checks the shape (known keys only, types, enum values, numeric
// ranges) and converts. Paths are copied as written ("~/cache"); NormalisePaths() resolves them
// and ValidateConfig() checks what needs more than the shape (regexes, names).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// Unknown keys are errors (a typo such as "writeable_roots" must not silently leave the sandbox
// at a weaker setting than the person meant); keys left out take the defaults of cordon/config.h.
[[nodiscard]] Result<Config> ReadConfigJson(const nlohmann::json& document,
                                            std::string_view source);

// Every key pointer the reader accepts ("/sandbox", "/sandbox/mode", ...), in canonical order.
// The free-form names under /environment/set and /sandbox/domain_lists are not listed. Tests
// compare this with the schema.
std::vector<std::string> AcceptedKeyPointers();

}  // namespace cordon::config
