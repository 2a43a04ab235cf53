// The toolchains' part of the command's environment (decision 0039). The command's HOME is
// private, so a toolchain that finds itself through HOME (rustup's proxies, pyenv's shims) would
// look in an empty directory: where the caller does not name its home, it is pointed at the one
// in the caller's real home, which the sandbox shows read-only (or grants, with a hidden home).
// And the names that say where a toolchain is or how to build — never a credential, a cache or a
// registry address — pass from the caller by default.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::plan {

// A toolchain's home variable and where it lies in a home when the variable is not set.
struct ToolchainPointer {
  std::string_view variable;
  std::string_view in_home;
};

inline constexpr ToolchainPointer kToolchainPointers[] = {
    {"RUSTUP_HOME", ".rustup"}, {"PYENV_ROOT", ".pyenv"}, {"RBENV_ROOT", ".rbenv"},
    {"NVM_DIR", ".nvm"},        {"VOLTA_HOME", ".volta"}, {"SDKMAN_DIR", ".sdkman"},
};

// True for a toolchain variable copied from the caller by default: where a toolchain is
// (JAVA_HOME, GOROOT, VIRTUAL_ENV, the pointers above, ...) and how to build (CC, CFLAGS,
// GOFLAGS, RUSTFLAGS, ...). Cache locations (CARGO_HOME, GOPATH, npm_config_cache) are not in
// it: the host's caches are never the command's to write (decision 0002).
bool IsToolchainName(std::string_view name);

// The directories the caller's toolchain variables name (the pointers' and JAVA_HOME, GOROOT,
// VIRTUAL_ENV, CONDA_PREFIX, ...), absolute ones only, the first occurrence of each name: a
// hidden home grants them.
std::vector<std::filesystem::path> ToolchainDirectories(const std::vector<std::string>& env);

// "NAME=value" for each pointer whose directory is in one of `homes` (the first that has it),
// in kToolchainPointers order. The caller's own value, when it passes, wins over these.
std::vector<std::string> ToolchainPointers(const std::vector<std::filesystem::path>& homes);

}  // namespace cordon::plan
