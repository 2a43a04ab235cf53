#include "plan/tool_cache_seeds.h"

#include <optional>

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// The value of `name` in the environment (the first definition, as getenv() finds it); none
// when it is missing or empty.
std::optional<std::string> Variable(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
      std::string value = entry.substr(name.size() + 1);
      if (value.empty()) return std::nullopt;
      return value;
    }
  }
  return std::nullopt;
}

// The tool's variable when set (used only when absolute: the tool itself would take a relative
// one from its working directory, or read "off"), else `fallback` (empty: none).
std::optional<fs::path> Location(const std::vector<std::string>& env, std::string_view name,
                                 const fs::path& fallback) {
  if (std::optional<std::string> value = Variable(env, name)) {
    const fs::path path(*value);
    if (!path.is_absolute()) return std::nullopt;
    return path.lexically_normal();
  }
  if (fallback.empty() || !fallback.is_absolute()) return std::nullopt;
  return fallback.lexically_normal();
}

}  // namespace

std::vector<ToolCacheSeed> HostToolCacheSeeds(const std::vector<std::string>& caller_env,
                                              const std::filesystem::path& caller_home) {
  const fs::path home = caller_home.is_absolute() ? caller_home : fs::path();
  const auto under_home = [&](const fs::path& relative) {
    return home.empty() ? fs::path() : home / relative;
  };
  fs::path xdg_cache = under_home(".cache");
  if (std::optional<std::string> xdg = Variable(caller_env, "XDG_CACHE_HOME");
      xdg && fs::path(*xdg).is_absolute()) {
    xdg_cache = *xdg;
  }
  const auto in_xdg_cache = [&](const char* name) {
    return xdg_cache.empty() ? fs::path() : xdg_cache / name;
  };
  // Go's module cache: GOMODCACHE, else the first GOPATH entry's pkg/mod, else ~/go/pkg/mod.
  fs::path go_path = under_home("go");
  if (std::optional<std::string> gopath = Variable(caller_env, "GOPATH")) {
    go_path = fs::path(gopath->substr(0, gopath->find(':')));
  }
  const fs::path go_mod = go_path.is_absolute() ? go_path / "pkg" / "mod" : fs::path();

  std::vector<ToolCacheSeed> seeds;
  const auto add = [&](std::string_view tool, std::optional<fs::path> source,
                       const fs::path& destination) {
    if (source) seeds.push_back({tool, std::move(*source), destination});
  };
  // npm keeps its content-addressed cache in _cacache; the rest of ~/.npm is logs.
  if (std::optional<fs::path> npm = Location(caller_env, "npm_config_cache", under_home(".npm"))) {
    add("npm", *npm / "_cacache", "npm/_cacache");
  }
  add("yarn", Location(caller_env, "YARN_CACHE_FOLDER", in_xdg_cache("yarn")), "yarn");
  add("pip", Location(caller_env, "PIP_CACHE_DIR", in_xdg_cache("pip")), "pip");
  add("uv", Location(caller_env, "UV_CACHE_DIR", in_xdg_cache("uv")), "uv");
  add("go", Location(caller_env, "GOCACHE", in_xdg_cache("go-build")), "go-build");
  add("go", Location(caller_env, "GOMODCACHE", go_mod), "go-mod");
  // CARGO_HOME keeps credentials.toml and config.toml beside the caches: only these two.
  if (std::optional<fs::path> cargo = Location(caller_env, "CARGO_HOME", under_home(".cargo"))) {
    add("cargo", *cargo / "registry", "cargo/registry");
    add("cargo", *cargo / "git", "cargo/git");
  }
  // ~/.m2 keeps settings.xml (repository passwords) beside the repository.
  if (!home.empty()) add("maven", home / ".m2" / "repository", "maven");
  // GRADLE_USER_HOME keeps gradle.properties (tokens) beside the caches and distributions.
  if (std::optional<fs::path> gradle =
          Location(caller_env, "GRADLE_USER_HOME", under_home(".gradle"))) {
    add("gradle", *gradle / "caches", "gradle/caches");
    add("gradle", *gradle / "wrapper", "gradle/wrapper");
  }
  add("ccache", Location(caller_env, "CCACHE_DIR", in_xdg_cache("ccache")), "ccache");
  return seeds;
}

}  // namespace cordon::plan
