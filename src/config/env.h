// The few environment variables the configuration depends on, passed in as a value so that the
// library never calls getenv (tests and embedders choose them; only the CLI edge reads the real
// environment, through FromProcessEnvironment()).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::config {

struct Env {
  std::optional<std::string> home;             // $HOME: "~" expansion, default config location
  std::optional<std::string> xdg_config_home;  // $XDG_CONFIG_HOME
};

// Reads HOME and XDG_CONFIG_HOME of this process. For the CLI's main() and similar edges only.
Env FromProcessEnvironment();

// $XDG_CONFIG_HOME/cordon/config.json when XDG_CONFIG_HOME is set and absolute (the XDG base
// directory spec says a relative value is to be ignored), else $HOME/.config/cordon/config.json.
// kConfig when neither gives an absolute directory.
[[nodiscard]] Result<std::filesystem::path> DefaultConfigPath(const Env& env);

// Expands "~" and "~/..." with env.home, requires the result to be absolute and normalises it
// lexically (no "." or "..", no trailing "/"). Does not touch the filesystem. The kConfig error
// message is bare: callers prefix the source and JSON pointer.
[[nodiscard]] Result<std::filesystem::path> ExpandUserPath(std::string_view text, const Env& env);

}  // namespace cordon::config
