// Pieces every cordon subcommand shares: the global options, loading the configuration with
// command-line overrides, and the exit codes.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::cli {

// Exit codes of the cordon binary (docs/cli.md). A command's own code passes through.
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitSetupFailed = 125;  // bad config or flags, sandbox unavailable
inline constexpr int kExitDenied = 126;

struct GlobalOptions {
  std::string config_path;  // --config FILE; empty: the default user config location
};

// Flags that override the config file (run, status).
struct SandboxFlags {
  std::string mode;                         // --mode
  std::string network;                      // --network
  std::string backend;                      // --backend
  std::vector<std::string> writable_roots;  // --writable-root (repeatable)
  std::optional<double> timeout_seconds;    // --timeout
  bool unsafe = false;                      // --unsafe: mode off, with a warning
};

// The user config (or defaults when there is none) with `flags` applied.
[[nodiscard]] Result<Config> LoadConfig(const GlobalOptions& global, const SandboxFlags& flags);

// The user config file that `cordon sandbox` edits.
[[nodiscard]] Result<std::filesystem::path> ConfigFilePath(const GlobalOptions& global);

// Prints "cordon: <message>" on stderr and returns kExitSetupFailed.
int ReportSetupError(const Error& error);

}  // namespace cordon::cli
