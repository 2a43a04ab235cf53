#include "cli/cli_common.h"

#include <fmt/format.h>

#include <cstdio>

#include "config/enums.h"
#include "config/load.h"
#include "config/overrides.h"
#include "config/validate.h"

namespace cordon::cli {

Result<Config> LoadConfig(const GlobalOptions& global, const SandboxFlags& flags) {
  const config::Env env = config::FromProcessEnvironment();
  std::optional<std::filesystem::path> explicit_path;
  if (!global.config_path.empty()) explicit_path = global.config_path;
  CORDON_TRY(Config loaded, config::LoadUserConfig(explicit_path, env));

  config::ConfigOverrides overrides;
  if (!flags.mode.empty()) {
    CORDON_TRY(overrides.mode, config::ParseSandboxMode(flags.mode));
  }
  if (flags.unsafe) {
    if (overrides.mode && *overrides.mode != SandboxMode::kOff) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--unsafe selects mode off and contradicts --mode {}", flags.mode));
    }
    overrides.mode = SandboxMode::kOff;
  }
  if (!flags.network.empty()) {
    CORDON_TRY(overrides.network, config::ParseNetworkPolicy(flags.network));
  }
  if (!flags.backend.empty()) {
    CORDON_TRY(overrides.backend, config::ParseBackendChoice(flags.backend));
  }
  overrides.writable_roots = flags.writable_roots;
  // A relative --writable-root is relative to where the user typed it.
  std::error_code ec;
  if (auto here = std::filesystem::current_path(ec); !ec) overrides.working_directory = here;
  if (flags.timeout_seconds) {
    if (!(*flags.timeout_seconds > 0)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--timeout: expected a number of seconds > 0, found {}",
                              *flags.timeout_seconds));
    }
    overrides.timeout = config::TimeoutFromSeconds(*flags.timeout_seconds);
  }
  CORDON_TRY_VOID(config::ApplyOverrides(loaded, overrides, env));
  return loaded;
}

Result<std::filesystem::path> ConfigFilePath(const GlobalOptions& global) {
  if (!global.config_path.empty()) return std::filesystem::path(global.config_path);
  return config::DefaultConfigPath(config::FromProcessEnvironment());
}

int ReportSetupError(const Error& error) {
  fmt::print(stderr, "cordon: {}\n", error.message);
  return kExitSetupFailed;
}

}  // namespace cordon::cli
