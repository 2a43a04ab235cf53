#include "session/planted_links.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/paths.h"

namespace cordon::session {

Result<void> RefusePlantedLinks(const std::filesystem::path& configured,
                                const std::vector<std::filesystem::path>& writable) {
  std::filesystem::path prefix;
  for (const std::filesystem::path& part : configured.lexically_normal()) {
    prefix /= part;
    struct stat st;
    // Links before this component are followed by the kernel; this one is looked at itself.
    if (::lstat(prefix.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
    Result<std::filesystem::path> directory = core::Canonical(prefix.parent_path());
    if (!directory) continue;  // the root itself then fails to resolve, with its own message
    const auto holder = std::find_if(writable.begin(), writable.end(), [&](const auto& root) {
      return core::IsWithin(*directory, root);
    });
    if (holder == writable.end()) continue;
    Result<std::filesystem::path> target = core::Canonical(prefix);
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("writable root {}: {} is a symbolic link inside {}, which sandboxed "
                            "commands can write, so a command may have made it; name the "
                            "directory itself in the configuration{}, or remove the link",
                            configured.string(), prefix.string(), holder->string(),
                            target ? fmt::format(" ({})", target->string()) : std::string()));
  }
  return {};
}

}  // namespace cordon::session
