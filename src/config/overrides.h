// Command-line flags applied on top of the user config file. Flags win over the file; lists
// (--writable-root, --hide, --allow-domain, --deny-domain) add to the file's lists. The same rules
// as for the file apply: roots must exist and are canonicalised, "/" is refused, limits are
// range-checked.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/env.h"
#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon::config {

struct ConfigOverrides {
  std::optional<SandboxMode> mode;       // --mode, --unsafe (off)
  std::optional<NetworkPolicy> network;  // --network
  // --allow-domain, --deny-domain as typed: patterns or "@name" lists of the config file. Either
  // one without `network` selects network "domains" (the file's "deny" stays "deny" when only
  // --deny-domain is given: a deny rule never opens anything); with another `network` it is
  // an error.
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  std::vector<std::string> writable_roots;  // --writable-root, as typed
  std::vector<std::string> hidden_paths;    // --hide, as typed
  std::vector<std::string> readable_paths;  // --readable, as typed
  std::optional<HomeView> home;             // --home
  std::optional<ToolCaches> tool_caches;    // --tool-caches
  std::optional<bool> protect_git_metadata;
  std::optional<bool> allow_outside_sandbox;
  std::optional<BackendChoice> backend;              // --backend
  std::optional<std::chrono::milliseconds> timeout;  // --timeout
  std::optional<std::uint64_t> output_bytes;
  std::optional<std::uint64_t> memory_bytes;  // --memory (0: no limit)
  std::optional<std::uint64_t> processes;     // --processes
  std::optional<std::uint64_t> open_files;    // --open-files
  std::optional<std::uint64_t> cpu_seconds;   // --cpu-seconds
  // When set, relative --writable-root / --hide values are resolved against it (the CLI passes
  // its working directory: on a command line "../cache" is unambiguous, in a file it is not).
  std::optional<std::filesystem::path> working_directory;
};

// Errors are kConfig and start with "command line: --flag VALUE:".
[[nodiscard]] Result<void> ApplyOverrides(Config& config, const ConfigOverrides& overrides,
                                          const Env& env);

}  // namespace cordon::config
