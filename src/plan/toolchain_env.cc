#include "plan/toolchain_env.h"

#include <sys/stat.h>

#include <algorithm>

#include "core/paths.h"

namespace cordon::plan {
namespace {

constexpr std::string_view kLocations[] = {
    "JAVA_HOME",     "GOROOT",        "VIRTUAL_ENV",       "CONDA_PREFIX",     "CONDA_DEFAULT_ENV",
    "PYENV_VERSION", "RBENV_VERSION", "RUSTUP_TOOLCHAIN",  "NVM_BIN",          "NVM_INC",
    "DOTNET_ROOT",   "ANDROID_HOME",  "ANDROID_SDK_ROOT",  "ANDROID_NDK_HOME", "MAVEN_HOME",
    "M2_HOME",       "GRADLE_HOME",   "CMAKE_PREFIX_PATH", "PKG_CONFIG_PATH",
};

// Of kLocations, those that name one directory (not a list, not a name). Not M2_HOME: often
// set to ~/.m2 by mistake, whose settings.xml holds repository passwords.
constexpr std::string_view kDirectories[] = {
    "JAVA_HOME",    "GOROOT",           "VIRTUAL_ENV",      "CONDA_PREFIX", "DOTNET_ROOT",
    "ANDROID_HOME", "ANDROID_SDK_ROOT", "ANDROID_NDK_HOME", "MAVEN_HOME",   "GRADLE_HOME",
};

constexpr std::string_view kBuildSettings[] = {
    "CC",
    "CXX",
    "AR",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "MAKEFLAGS",
    "CMAKE_GENERATOR",
    "CMAKE_BUILD_PARALLEL_LEVEL",
    "GOFLAGS",
    "GO111MODULE",
    "GOTOOLCHAIN",
    "CGO_ENABLED",
    "GOOS",
    "GOARCH",
    "RUSTFLAGS",
    "CARGO_BUILD_JOBS",
    "CARGO_TERM_COLOR",
    "NODE_ENV",
};

bool IsPointer(std::string_view name) {
  return std::any_of(std::begin(kToolchainPointers), std::end(kToolchainPointers),
                     [&](const ToolchainPointer& p) { return p.variable == name; });
}

template <std::size_t N>
bool Contains(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

}  // namespace

bool IsToolchainName(std::string_view name) {
  return IsPointer(name) || Contains(kLocations, name) || Contains(kBuildSettings, name);
}

std::vector<std::filesystem::path> ToolchainDirectories(const std::vector<std::string>& env) {
  std::vector<std::filesystem::path> dirs;
  std::vector<std::string_view> seen;
  for (const std::string& entry : env) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string_view name(entry.data(), eq);
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
    seen.push_back(name);
    const std::string_view value = std::string_view(entry).substr(eq + 1);
    if ((IsPointer(name) || Contains(kDirectories, name)) && value.starts_with('/')) {
      dirs.emplace_back(value);
    }
  }
  return dirs;
}

std::vector<std::string> ToolchainPointers(const std::vector<std::filesystem::path>& homes) {
  std::vector<std::string> entries;
  for (const ToolchainPointer& pointer : kToolchainPointers) {
    for (const std::filesystem::path& home : homes) {
      // Where it really is: a hidden home grants the canonical path, not a link to it.
      const auto dir = core::Canonical(home / pointer.in_home);
      struct stat st {};
      if (!dir || ::stat(dir->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      entries.push_back(std::string(pointer.variable) + "=" + dir->string());
      break;
    }
  }
  return entries;
}

}  // namespace cordon::plan
