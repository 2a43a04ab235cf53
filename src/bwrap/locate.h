// Finding a bubblewrap binary that the sandboxed command cannot have planted or replaced, and
// learning once per process what it can do.
//
//   Result<BwrapBinary> bwrap = LocateBwrap(config_path, writable_roots);
//
// Never searched on PATH (a workspace can put a `bwrap` there): only the configured absolute
// path or the distribution locations. The binary and every directory above it must belong to
// root or the caller and be writable by nobody else, and none may lie in a writable root.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "core/trusted_path.h"

namespace cordon::bwrap {

struct BwrapVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  friend auto operator<=>(const BwrapVersion&, const BwrapVersion&) = default;
};

// --clearenv and --perms, which the rendered argument vector relies on, arrived in 0.5.0.
inline constexpr BwrapVersion kMinimumBwrapVersion{0, 5, 0};

// The locations tried, in order, when the config names none.
inline constexpr std::string_view kBwrapLocations[] = {"/usr/bin/bwrap", "/bin/bwrap",
                                                       "/usr/local/bin/bwrap"};

struct BwrapBinary {
  std::filesystem::path path;  // canonical
  BwrapVersion version;
};

// "bubblewrap 0.8.0\n" -> {0, 8, 0}. Fails (kInvalidArgument) on anything else.
[[nodiscard]] Result<BwrapVersion> ParseBwrapVersion(std::string_view output);

// The trust check shared with the other binaries cordon runs (core/trusted_path.h).
using core::CheckTrustedPath;

// The first trusted, executable candidate (`configured` alone when non-empty), with its version
// from `bwrap --version`. Fails (kUnavailable) when none is installed or none is trusted, or the
// version is older than kMinimumBwrapVersion, saying what to install or fix.
[[nodiscard]] Result<BwrapBinary> LocateBwrap(
    const std::filesystem::path& configured,
    const std::vector<std::filesystem::path>& writable_roots);

}  // namespace cordon::bwrap
