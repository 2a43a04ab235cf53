// Loading the user's configuration. The only places a Config comes from are the user's own
// config file (the default location or --config FILE) and the command line (overrides.h).
// Nothing here looks inside the workspace or searches upwards from the working directory: a
// repository must not be able to widen its own sandbox.
//
//   config::Env env = config::FromProcessEnvironment();           // at the CLI edge only
//   Result<Config> config = config::LoadUserConfig(flag_config, env);
//   if (!config) { fmt::print(stderr, "cordon: {}\n", config.error().message); return 125; }
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "config/env.h"
#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

// The whole pipeline on text: JSON syntax -> shape and types -> paths -> semantic checks.
// `source` names the text in messages (normally the file name). Reads the filesystem only to
// resolve writable roots (realpath); never writes. This is the fuzzing entry point.
[[nodiscard]] Result<Config> ParseConfigText(std::string_view text, std::string_view source,
                                             const Env& env);

// Reads and parses one file. kNotFound when it does not exist; kSystem (naming the call and
// path) when it cannot be read; kConfig when it is not a regular file or is invalid.
[[nodiscard]] Result<Config> LoadConfigFile(const std::filesystem::path& path, const Env& env);

// `explicit_path` (--config FILE) must exist. Without it, DefaultConfigPath(env) is used and a
// missing file means the documented defaults (Config{}).
[[nodiscard]] Result<Config> LoadUserConfig(
    const std::optional<std::filesystem::path>& explicit_path, const Env& env);

// The text of a config file, or nullopt when it does not exist. Refuses non-regular files (a
// FIFO would block), world-writable files and files larger than kMaxConfigBytes.
[[nodiscard]] Result<std::optional<std::string>> ReadConfigFileText(
    const std::filesystem::path& path);

}  // namespace cordon::config
