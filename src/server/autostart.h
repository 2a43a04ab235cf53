// Starting this user's run server on demand (decision 0030): the first `cordon run` that finds
// none listening starts `cordon serve --idle-timeout 300` in the background and runs its own
// command itself; the runs after it are served until the server has been idle for five minutes.
// CORDON_RUN_SERVER chooses: `auto` (the default), `use` (use one that runs, never start one) or
// `off` (never use one, as --no-server).
#pragma once

#include <chrono>
#include <optional>

#include "cordon/error.h"
#include "server/paths.h"

namespace cordon::server {

enum class ServerUse { kAuto, kUse, kOff };

// How long a server started on demand waits for the next command before it exits.
inline constexpr std::chrono::seconds kAutoStartIdleTimeout{300};

// The value of CORDON_RUN_SERVER (nullopt: unset). kInvalidArgument naming the value when it is
// none of auto, use, off.
[[nodiscard]] Result<ServerUse> ParseServerUse(const std::optional<std::string>& setting);

// Starts `cordon serve` (this very executable) for `paths`, detached: its own session, "/" as
// working directory, /dev/null as stdin, stdout and stderr, no descriptor of this process, the
// signal mask and dispositions reset; the caller's environment, credentials, umask and limits
// (it serves callers of this same context only, context.h). Returns at once, without waiting for
// it to listen; does nothing when the directory above paths.directory does not exist (an
// XDG_RUNTIME_DIR that is not there) or paths.directory cannot be made safe. A server that
// fails to start (another one took the lock first) exits; the next run finds one or not.
void StartServerInBackground(const ServerPaths& paths);

}  // namespace cordon::server
