#include "plan/home_aliases.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/paths.h"
#include "core/unique_fd.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '3' &&
        field[i + 2] >= '0' && field[i + 2] <= '7' && field[i + 3] >= '0' && field[i + 3] <= '7') {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                               (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// `path`, which lies within `from`, moved to the same place below `to`.
fs::path Moved(const fs::path& path, const fs::path& from, const fs::path& to) {
  if (path == from) return to;
  return (to / path.lexically_relative(from)).lexically_normal();
}

}  // namespace

std::vector<MountEntry> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> entries;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    // mount ID, parent ID, major:minor, root, mount point, mount options, ...
    std::string_view fields[6];
    std::size_t count = 0;
    while (count < 6 && !line.empty()) {
      const std::size_t space = line.find(' ');
      fields[count++] = line.substr(0, space);
      line.remove_prefix(space == std::string_view::npos ? line.size() : space + 1);
    }
    if (count < 5 || fields[2].find(':') == std::string_view::npos || !fields[3].starts_with('/') ||
        !fields[4].starts_with('/')) {
      continue;
    }
    bool read_only = false;
    for (std::string_view options = count > 5 ? fields[5] : std::string_view(); !options.empty();) {
      const std::size_t comma = options.find(',');
      read_only = read_only || options.substr(0, comma) == "ro";
      options.remove_prefix(comma == std::string_view::npos ? options.size() : comma + 1);
    }
    entries.push_back({std::string(fields[2]), fs::path(Unescape(fields[3])).lexically_normal(),
                       fs::path(Unescape(fields[4])).lexically_normal(), read_only});
  }
  return entries;
}

std::vector<MountEntry> ReadMountTable() {
  core::UniqueFd fd(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!fd) return {};
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return ParseMountInfo(text);
}

std::vector<Alias> AliasesOf(const fs::path& dir, const std::vector<MountEntry>& mounts) {
  // The mount that shows `dir` at its own path: the last of the deepest mount points above it
  // (a later mount at the same place covers an earlier one).
  const MountEntry* home_mount = nullptr;
  for (const MountEntry& m : mounts) {
    if (!core::IsWithin(dir, m.mount_point)) continue;
    if (home_mount == nullptr ||
        m.mount_point.native().size() >= home_mount->mount_point.native().size()) {
      home_mount = &m;
    }
  }
  if (home_mount == nullptr) return {};
  // Where `dir` lies inside its file system.
  const fs::path in_fs = Moved(dir, home_mount->mount_point, home_mount->root);
  std::vector<Alias> aliases;
  for (const MountEntry& m : mounts) {
    if (&m == home_mount || m.device != home_mount->device) continue;
    Alias alias;
    if (core::IsWithin(in_fs, m.root)) {
      alias = {Moved(in_fs, m.root, m.mount_point), true, dir};
    } else if (core::IsWithin(m.root, in_fs)) {
      alias = {m.mount_point, false, Moved(m.root, in_fs, dir)};
    } else {
      continue;
    }
    if (alias.path == dir) continue;
    const bool seen = std::any_of(aliases.begin(), aliases.end(),
                                  [&](const Alias& a) { return a.path == alias.path; });
    if (!seen) aliases.push_back(std::move(alias));
  }
  return aliases;
}

std::optional<AliasInRoot> FindAliasInRoots(const std::vector<fs::path>& dirs,
                                            const std::vector<fs::path>& roots,
                                            const std::vector<MountEntry>& mounts) {
  for (const fs::path& dir : dirs) {
    for (const Alias& alias : AliasesOf(dir, mounts)) {
      if (core::IsWithinAny(alias.shows, roots)) continue;
      for (const fs::path& root : roots) {
        // A root that is a part's second mount is that part, as if cordon ran there.
        const bool is_the_part = !alias.whole && alias.path == root;
        if (core::IsWithin(alias.path, root) && !is_the_part) {
          return AliasInRoot{alias.path, alias.shows, root};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace cordon::plan
