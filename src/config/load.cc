#include "config/load.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "config/diagnostics.h"
#include "config/domains.h"
#include "config/json_document.h"
#include "config/json_reader.h"
#include "config/resolve_paths.h"
#include "config/validate.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::config {

Result<Config> ParseConfigText(std::string_view text, std::string_view source, const Env& env) {
  CORDON_TRY(nlohmann::json document, ParseJsonDocument(text, source));
  CORDON_TRY(Config config, ReadConfigJson(document, source));
  CORDON_TRY_VOID(NormalisePaths(config, env, source));
  CORDON_TRY_VOID(NormaliseDomains(config, source));
  CORDON_TRY_VOID(ValidateConfig(config, source));
  return config;
}

Result<std::optional<std::string>> ReadConfigFileText(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO planted at the config path must not hang cordon.
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT) return std::optional<std::string>();
    return core::FailSyscall("open", path.native());
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) return core::FailSyscall("fstat", path.native());
  if (!S_ISREG(info.st_mode)) {
    return FailConfig(path.native(), "", "the config must be a regular file");
  }
  // Anyone who can write the file can widen the sandbox; a world-writable config is not the
  // user's own. (Group-writable is left alone: umask 002 with per-user groups is common.)
  if ((info.st_mode & S_IWOTH) != 0) {
    return FailConfig(path.native(), "",
                      fmt::format("the config is writable by every user (mode {:04o}), so anyone "
                                  "could widen the sandbox; run chmod o-w on it",
                                  info.st_mode & 07777));
  }
  if (static_cast<std::uint64_t>(info.st_size) > kMaxConfigBytes) {
    return FailConfig(path.native(), "",
                      fmt::format("the file is {} bytes; a config larger than {} bytes is refused",
                                  info.st_size, kMaxConfigBytes));
  }
  std::string text;
  char buffer[8192];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return core::FailSyscall("read", path.native());
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    // The file may grow after fstat; the limit holds for what is actually read.
    if (text.size() > kMaxConfigBytes) {
      return FailConfig(path.native(), "",
                        fmt::format("a config larger than {} bytes is refused", kMaxConfigBytes));
    }
  }
  return std::optional<std::string>(std::move(text));
}

Result<Config> LoadConfigFile(const std::filesystem::path& path, const Env& env) {
  CORDON_TRY(std::optional<std::string> text, ReadConfigFileText(path));
  if (!text) {
    return Fail(ErrorCode::kNotFound, fmt::format("config file {} does not exist", path.native()),
                ENOENT);
  }
  return ParseConfigText(*text, path.native(), env);
}

Result<Config> LoadUserConfig(const std::optional<std::filesystem::path>& explicit_path,
                              const Env& env) {
  if (explicit_path) {
    CORDON_TRY(Config config, LoadConfigFile(*explicit_path, env));
    // The file itself: its directory may be the workspace.
    config.sandbox.own_config.push_back(
        std::filesystem::absolute(*explicit_path).lexically_normal());
    return config;
  }
  CORDON_TRY(std::filesystem::path path, DefaultConfigPath(env));
  CORDON_TRY(std::optional<std::string> text, ReadConfigFileText(path));
  Config config;
  if (text) {
    CORDON_TRY(config, ParseConfigText(*text, path.native(), env));
  }
  // The directory: a config.json created there later would be read by the next run.
  config.sandbox.own_config.push_back(path.parent_path());
  return config;
}

}  // namespace cordon::config
