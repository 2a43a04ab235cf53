// Where the run server of this user listens: <dir>/run.sock, next to <dir>/server.lock (held by
// the running server). <dir> is $XDG_RUNTIME_DIR/cordon when XDG_RUNTIME_DIR is set, absolute
// and ours (or does not exist: then no server is there), else /tmp/cordon-<uid>. "Ours": a real
// directory (not a symlink) owned by this user that no one else may write — `su` keeps another
// user's XDG_RUNTIME_DIR, whose owner could swap <dir> under a server started there. The directory
// must be a real directory (not a symlink) owned by this user with no access for anyone else;
// anything else refuses, since whoever controls it could stand in for the server.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "cordon/error.h"

namespace cordon::server {

struct ServerPaths {
  std::filesystem::path directory;
  std::filesystem::path socket;  // directory / "run.sock"
  std::filesystem::path lock;    // directory / "server.lock"
};

// `runtime_dir` is $XDG_RUNTIME_DIR (nullopt when unset). Looks at it (lstat), nothing else.
ServerPaths DefaultServerPaths(const std::optional<std::string>& runtime_dir);

// Checks the directory (lstat: a directory, owned by the effective uid, mode 0700 or
// stricter); `create`: makes it (mode 0700) when it does not exist. kNotFound when it does not
// exist and `create` is false; kUnavailable naming the problem when it is not safe to use.
[[nodiscard]] Result<void> CheckDirectory(const std::filesystem::path& directory, bool create);

}  // namespace cordon::server
