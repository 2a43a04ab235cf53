#include "config/update.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>

#include <cerrno>

#include "config/atomic_file.h"
#include "config/load.h"
#include "config/resolve_paths.h"
#include "config/to_json.h"
#include "config/validate.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::config {

Result<void> WriteConfigAtomic(const std::filesystem::path& path, const Config& config) {
  CORDON_TRY_VOID(ValidateConfig(config, path.native()));
  CORDON_TRY(std::string text, ToJsonChecked(config));
  return WriteFileAtomic(path, text);
}

Result<Config> UpdateConfigFile(const std::filesystem::path& path, const Env& env,
                                const std::function<void(Config&)>& edit) {
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  CORDON_TRY_VOID(CreatePrivateDirectories(dir));
  // The lock is on the directory, not the file: the file is replaced by rename, and a lock on
  // the old inode would not exclude a writer that opened the new one. Released on close.
  core::UniqueFd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) return core::FailSyscall("open", dir.native());
  while (::flock(dir_fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return core::FailSyscall("flock", dir.native());
  }

  CORDON_TRY(std::optional<std::string> text, ReadConfigFileText(path));
  Config config;
  if (text) {
    CORDON_TRY(config, ParseConfigText(*text, path.native(), env));
  }
  edit(config);
  const std::string source = fmt::format("{} (after the change)", path.native());
  CORDON_TRY_VOID(NormalisePaths(config, env, source));
  CORDON_TRY_VOID(ValidateConfig(config, source));
  CORDON_TRY_VOID(WriteConfigAtomic(path, config));
  return config;
}

}  // namespace cordon::config
