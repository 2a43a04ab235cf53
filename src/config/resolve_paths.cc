#include "config/resolve_paths.h"

#include <fmt/format.h>

#include <algorithm>

#include "config/diagnostics.h"
#include "core/paths.h"

namespace cordon::config {
namespace {

std::unexpected<Error> RefuseRoot(std::string_view what) {
  return Fail(ErrorCode::kConfig,
              fmt::format("{} \"/\" is refused: it would cover the whole filesystem and disable "
                          "the sandbox (use mode \"off\" if that is what you want)",
                          what));
}

void RemoveRepeats(std::vector<std::filesystem::path>& paths) {
  std::vector<std::filesystem::path> unique;
  for (auto& path : paths) {
    if (std::find(unique.begin(), unique.end(), path) == unique.end()) {
      unique.push_back(std::move(path));
    }
  }
  paths = std::move(unique);
}

template <typename Resolve>
Result<void> ResolveList(std::vector<std::filesystem::path>& paths, std::string_view source,
                         std::string_view pointer, const Resolve& resolve) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    Result<std::filesystem::path> resolved = resolve(paths[i].native());
    if (!resolved) {
      return FailConfig(source, PointerAppend(pointer, i), resolved.error().message);
    }
    paths[i] = std::move(*resolved);
  }
  RemoveRepeats(paths);
  return {};
}

}  // namespace

Result<std::filesystem::path> ResolveWritableRoot(std::string_view text, const Env& env) {
  CORDON_TRY(std::filesystem::path expanded, ExpandUserPath(text, env));
  Result<std::filesystem::path> canonical = core::Canonical(expanded);
  if (!canonical) {
    if (canonical.error().code == ErrorCode::kNotFound) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("writable root {} does not exist ({}); create it or remove it "
                              "from the list",
                              Quote(expanded.native()), canonical.error().message));
    }
    return Fail(ErrorCode::kConfig,
                fmt::format("cannot resolve writable root {}: {}", Quote(expanded.native()),
                            canonical.error().message));
  }
  if (canonical->native() == "/") return RefuseRoot("writable root");
  // /proc and /sys are kernel interfaces, not files: a write there (kernel.core_pattern, a
  // sysfs knob) changes the host itself. THREATS.md asks that /proc/sys stay read-only.
  for (std::string_view kernel : {"/proc", "/sys"}) {
    if (core::IsWithin(*canonical, std::filesystem::path(kernel))) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("writable root {} is refused: {} is a kernel interface, and "
                              "writing there would change the host kernel rather than files",
                              Quote(canonical->native()), kernel));
    }
  }
  // The name, not what it reaches today: a session resolves it when it starts and refuses a
  // link that a sandboxed command could have made (session/planted_links.h).
  return expanded;
}

Result<std::filesystem::path> ResolveHiddenPath(std::string_view text, const Env& env) {
  CORDON_TRY(std::filesystem::path expanded, ExpandUserPath(text, env));
  if (expanded.native() == "/") return RefuseRoot("hidden path");
  return expanded;
}

Result<std::filesystem::path> ResolveReadablePath(std::string_view text, const Env& env) {
  CORDON_TRY(std::filesystem::path expanded, ExpandUserPath(text, env));
  // Granting "/" or a whole home would undo the hidden view it is an exception to.
  if (expanded.native() == "/") return RefuseRoot("readable path");
  if (env.home && expanded == std::filesystem::path(*env.home).lexically_normal()) {
    return Fail(ErrorCode::kConfig,
                "the home directory itself: name the paths inside it the command may read, or "
                "set sandbox.home to \"read_only\"");
  }
  return expanded;
}

Result<void> NormalisePaths(Config& config, const Env& env, std::string_view source) {
  CORDON_TRY_VOID(
      ResolveList(config.sandbox.writable_roots, source, "/sandbox/writable_roots",
                  [&env](std::string_view text) { return ResolveWritableRoot(text, env); }));
  CORDON_TRY_VOID(
      ResolveList(config.sandbox.hidden_paths, source, "/sandbox/hidden_paths",
                  [&env](std::string_view text) { return ResolveHiddenPath(text, env); }));
  CORDON_TRY_VOID(
      ResolveList(config.sandbox.readable_paths, source, "/sandbox/readable_paths",
                  [&env](std::string_view text) { return ResolveReadablePath(text, env); }));
  return {};
}

}  // namespace cordon::config
