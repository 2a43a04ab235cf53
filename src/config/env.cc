#include "config/env.h"

#include <fmt/format.h>

#include <cstdlib>

#include "config/diagnostics.h"
#include "core/paths.h"

namespace cordon::config {

Env FromProcessEnvironment() {
  Env env;
  if (const char* home = std::getenv("HOME"); home != nullptr) env.home = home;
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr) env.xdg_config_home = xdg;
  return env;
}

Result<std::filesystem::path> DefaultConfigPath(const Env& env) {
  if (env.xdg_config_home && !env.xdg_config_home->empty() && env.xdg_config_home->front() == '/') {
    return std::filesystem::path(*env.xdg_config_home) / "cordon" / "config.json";
  }
  if (env.home && !env.home->empty() && env.home->front() == '/') {
    return std::filesystem::path(*env.home) / ".config" / "cordon" / "config.json";
  }
  return Fail(ErrorCode::kConfig,
              "cannot locate the user config: neither XDG_CONFIG_HOME nor HOME is set to an "
              "absolute path (pass --config FILE)");
}

Result<std::filesystem::path> ExpandUserPath(std::string_view text, const Env& env) {
  std::filesystem::path out;
  if (text.empty()) return Fail(ErrorCode::kConfig, "expected a path, found an empty string");
  if (text.front() == '~') {
    if (text != "~" && !text.starts_with("~/")) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("expected an absolute path or one starting with \"~/\", found {} "
                              "(\"~user\" is not supported)",
                              Quote(text)));
    }
    if (!env.home || env.home->empty() || env.home->front() != '/') {
      return Fail(
          ErrorCode::kConfig,
          fmt::format("cannot expand {}: HOME is not set to an absolute path", Quote(text)));
    }
    out = core::ExpandHome(text, *env.home).lexically_normal();
  } else if (text.front() != '/') {
    return Fail(ErrorCode::kConfig,
                fmt::format("expected an absolute path or one starting with \"~/\", found "
                            "relative path {} (it would depend on where cordon is started)",
                            Quote(text)));
  } else {
    out = std::filesystem::path(text).lexically_normal();
  }
  // lexically_normal keeps a trailing separator ("/a/b/"); drop it so duplicates compare equal.
  if (out.native().size() > 1 && out.native().back() == '/') out = out.parent_path();
  return out;
}

}  // namespace cordon::config
