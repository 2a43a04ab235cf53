#include "session/tool_cache_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/paths.h"
#include "core/unique_fd.h"
#include "plan/tool_caches.h"

namespace cordon::session {
namespace {

// mkdir -p with mode 0700 for what is made (what exists is left as the user keeps it).
bool MakeDirectories(const std::filesystem::path& dir) {
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return true;
}

// Records which workspace a workspace's own cache belongs to, for `cordon cache status`.
void RecordWorkspace(const std::filesystem::path& file, const std::filesystem::path& workspace) {
  const core::UniqueFd fd(
      ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return;  // already there (or not writable: only the listing misses it)
  const std::string text = workspace.string() + "\n";
  [[maybe_unused]] const ssize_t written = ::write(fd.get(), text.data(), text.size());
}

}  // namespace

std::filesystem::path PrepareToolCache(const SandboxConfig& config,
                                       const std::vector<std::string>& caller_env,
                                       const std::filesystem::path& caller_home,
                                       const std::filesystem::path& workspace) {
  if (config.mode != SandboxMode::kWorkspaceWrite) return {};
  const std::optional<std::filesystem::path> root = plan::ToolCachesRoot(caller_env, caller_home);
  if (!root) return {};
  const std::optional<std::filesystem::path> dir =
      plan::ToolCacheDirectory(config.tool_caches, *root, workspace);
  if (!dir) return {};
  // Made once; every later command only resolves it (one realpath, no mkdir per component).
  Result<std::filesystem::path> canonical = core::Canonical(*dir);
  if (!canonical) {
    if (!MakeDirectories(*dir)) return {};
    if (config.tool_caches == ToolCaches::kWorkspace) {
      RecordWorkspace(dir->parent_path() / "workspace", workspace);
    }
    canonical = core::Canonical(*dir);
  }
  struct stat st {};
  if (!canonical || ::lstat(canonical->c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    return {};
  }
  return *canonical;
}

}  // namespace cordon::session
