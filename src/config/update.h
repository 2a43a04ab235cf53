// Writing the user config: used by `cordon sandbox ...`, which changes one setting and keeps
// the rest of the file as written (UpdateConfigFile). Changes apply to sessions started
// afterwards; a running Session keeps the Config it pinned.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "config/env.h"
#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// Validates `config` (ValidateConfig) and writes ToJson(config) with WriteFileAtomic: mode 0600,
// parent directories 0700, the old file intact if anything fails.
[[nodiscard]] Result<void> WriteConfigAtomic(const std::filesystem::path& path,
                                             const Config& config);

// One setting a user changes: where it is in the config (a JSON pointer, "/sandbox/mode") and
// its new value — or, with add_to_list, one more entry of the array there (created when absent;
// an entry already present is not added twice).
struct SettingChange {
  std::string pointer;
  nlohmann::json value;
  bool add_to_list = false;
};

// Loads `path` (none yet: an empty config; an invalid file is an error and is left alone),
// sets the one value `change` names — creating the objects on the way — and leaves everything
// else as the user wrote it: the `~/` forms of paths, the order of keys, settings it does not
// know to be defaults. The result is parsed and validated like any config before it replaces
// the file atomically; returns the config as loaded from the new text. Concurrent updates of
// the same file are serialised with flock on its directory, so two `cordon sandbox` calls
// cannot lose one another's change.
[[nodiscard]] Result<Config> UpdateConfigFile(const std::filesystem::path& path, const Env& env,
                                              const SettingChange& change);

}  // namespace cordon::config
