// Writing the user config: used by `cordon sandbox ...`. A written file is normalised: keys in
// the canonical order, every key present, paths canonical. Changes apply to sessions started
// afterwards; a running Session keeps the Config it pinned.
#pragma once

#include <filesystem>
#include <functional>

#include "config/env.h"
#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// Validates `config` (ValidateConfig) and writes ToJson(config) with WriteFileAtomic: mode 0600,
// parent directories 0700, the old file intact if anything fails.
[[nodiscard]] Result<void> WriteConfigAtomic(const std::filesystem::path& path,
                                             const Config& config);

// Load `path` (defaults if it does not exist; an invalid file is an error and is left alone),
// apply `edit`, normalise and validate the result, write it atomically, return what was
// written. Concurrent updates of the same file are serialised with flock on its directory, so
// two `cordon sandbox` calls cannot lose one another's change.
[[nodiscard]] Result<Config> UpdateConfigFile(const std::filesystem::path& path, const Env& env,
                                              const std::function<void(Config&)>& edit);

}  // namespace cordon::config
