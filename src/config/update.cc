#include "config/update.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>

#include "config/atomic_file.h"
#include "config/load.h"
#include "config/resolve_paths.h"
#include "config/to_json.h"
#include "config/validate.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::config {
namespace {

// Temporary files of writers killed before their rename (".config.json.tmp-XXXXXX"). Called
// with the directory lock held: every writer holds it until its rename, so any such file
// present now belongs to a writer that died. Best effort: a leftover is harmless.
void RemoveStaleTempFiles(int dir_fd, const std::filesystem::path& path) {
  const std::string prefix = "." + path.filename().native() + ".tmp-";
  int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return;
  }
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name.size() == prefix.size() + 6 && name.starts_with(prefix)) {
      (void)::unlinkat(dir_fd, entry->d_name, 0);
    }
  }
  ::closedir(dir);
}

}  // namespace

Result<void> WriteConfigAtomic(const std::filesystem::path& path, const Config& config) {
  CORDON_TRY_VOID(ValidateConfig(config, path.native()));
  CORDON_TRY(std::string text, ToJsonChecked(config));
  return WriteFileAtomic(path, text);
}

Result<Config> UpdateConfigFile(const std::filesystem::path& path, const Env& env,
                                const SettingChange& change) {
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
  RemoveStaleTempFiles(dir_fd.get(), path);

  CORDON_TRY(std::optional<std::string> text, ReadConfigFileText(path));
  // The document as written, keys in their order; checked whole first (a broken file stays).
  nlohmann::ordered_json document = nlohmann::ordered_json::object();
  if (text) {
    CORDON_TRY_VOID(ParseConfigText(*text, path.native(), env));
    document = nlohmann::ordered_json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!document.is_object()) {
      return Fail(ErrorCode::kConfig, fmt::format("{}: not a JSON object", path.native()));
    }
  }
  try {
    const nlohmann::ordered_json::json_pointer pointer(change.pointer);
    nlohmann::ordered_json value = nlohmann::ordered_json::parse(change.value.dump());
    if (!change.add_to_list) {
      document[pointer] = std::move(value);
    } else {
      nlohmann::ordered_json& list = document[pointer];  // null when absent
      if (list.is_null()) list = nlohmann::ordered_json::array();
      if (std::find(list.begin(), list.end(), value) == list.end()) {
        list.push_back(std::move(value));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Fail(ErrorCode::kConfig,
                fmt::format("{}: cannot set {}: {}", path.native(), change.pointer, e.what()));
  }
  const std::string written = document.dump(2) + "\n";
  const std::string source = fmt::format("{} (after the change)", path.native());
  CORDON_TRY(Config config, ParseConfigText(written, source, env));
  CORDON_TRY_VOID(WriteFileAtomic(path, written));
  return config;
}

}  // namespace cordon::config
