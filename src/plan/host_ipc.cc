#include "plan/host_ipc.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "core/paths.h"
#include "core/unique_fd.h"
#include "plan/mount_identity.h"
#include "plan/mount_ops.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// /proc/net/unix grows with every socket on the host; a bound that keeps planning cheap.
constexpr std::size_t kMaxProcNetUnix = 4 * 1024 * 1024;

// A mask over the entry `path` as it is now (lstat: a symlink is left alone, its target is
// masked where it lies if it needs to be).
void AddEntryMask(std::vector<MountOp>& ops, const fs::path& path) {
  const std::optional<Identified> found = IdentifyAt(AT_FDCWD, path.c_str(), /*mask=*/true);
  if (!found || S_ISLNK(found->mode)) return;
  ops.push_back({S_ISDIR(found->mode) ? MountOpKind::kMaskDirectory : MountOpKind::kMaskFile, path,
                 /*optional=*/true, found->id});
}

// Masks every entry of `dir` except those in `kept` (and descends into `descend`).
void MaskEntries(std::vector<MountOp>& ops, const fs::path& dir, const std::vector<fs::path>& kept,
                 const fs::path& descend) {
  for (const fs::path& entry : core::ListDirectory(dir)) {
    if (std::find(kept.begin(), kept.end(), entry) != kept.end()) continue;
    if (entry == descend) {
      MaskEntries(ops, entry, kept, {});
      continue;
    }
    AddEntryMask(ops, entry);
  }
}

std::string ReadBounded(const char* path) {
  core::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  std::string text;
  if (!fd.valid()) return text;
  char buffer[65536];
  while (text.size() < kMaxProcNetUnix) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace

std::vector<MountOp> BuildRuntimeDirMasks(const std::vector<fs::path>& roots,
                                          NetworkPolicy network) {
  std::vector<MountOp> ops;
  auto run = core::Canonical("/run");
  if (!run || core::IsWithinAny(*run, roots) ||
      std::any_of(roots.begin(), roots.end(),
                  [&](const fs::path& r) { return core::IsWithin(r, *run); })) {
    return ops;  // masking would hide a writable root
  }
  if (network != NetworkPolicy::kAllow) {  // deny and domains
    ops.push_back({MountOpKind::kMaskDirectory, *run, /*optional=*/true});
    return ops;
  }
  std::vector<fs::path> kept;
  for (std::string_view path : kRunKeptWithNetworkAllow) kept.emplace_back(path);
  MaskEntries(ops, *run, kept, *run / "systemd");
  return ops;
}

std::vector<fs::path> ParseProcNetUnix(std::string_view text) {
  std::vector<fs::path> paths;
  bool header = true;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    if (header) {  // "Num RefCount Protocol Flags Type St Inode Path"
      header = false;
      continue;
    }
    // Seven fields, then the path (which may contain spaces).
    std::size_t pos = 0;
    for (int field = 0; field < 7 && pos != std::string_view::npos; ++field) {
      pos = line.find_first_not_of(' ', pos);
      if (pos != std::string_view::npos) pos = line.find(' ', pos);
    }
    if (pos == std::string_view::npos) continue;  // unnamed socket
    std::string_view path = line.substr(pos + 1);
    if (!path.starts_with('/')) continue;  // abstract ("@name") or relative to its binder
    paths.emplace_back(path);
  }
  return paths;
}

std::vector<MountOp> BuildHostSocketMasks(const std::vector<fs::path>& roots,
                                          const fs::path& workspace) {
  std::vector<MountOp> ops;
  // Writable roots keep their sockets; /run, /dev and /proc have masks or views of their own;
  // the private /tmp and /var/tmp hide the host's, except where the (read-only) workspace is
  // bound back in.
  std::vector<fs::path> skipped = roots;
  std::vector<fs::path> private_dirs;
  for (const char* dir : {"/run", "/dev", "/proc"}) {
    if (auto canonical = core::Canonical(dir)) skipped.push_back(*canonical);
  }
  for (const char* dir : {"/tmp", "/var/tmp"}) {
    if (auto canonical = core::Canonical(dir)) private_dirs.push_back(*canonical);
  }
  for (const fs::path& listed : ParseProcNetUnix(ReadBounded("/proc/net/unix"))) {
    auto canonical = core::Canonical(listed);
    if (!canonical || core::IsWithinAny(*canonical, skipped)) continue;
    if (core::IsWithinAny(*canonical, private_dirs) && !core::IsWithin(*canonical, workspace))
      continue;
    const std::optional<Identified> found = IdentifyAt(AT_FDCWD, canonical->c_str(), /*mask=*/true);
    if (!found || !S_ISSOCK(found->mode)) continue;
    const bool seen = std::any_of(ops.begin(), ops.end(),
                                  [&](const MountOp& op) { return op.path == *canonical; });
    if (!seen) ops.push_back({MountOpKind::kMaskFile, *canonical, /*optional=*/true, found->id});
  }
  return ops;
}

std::vector<MountOp> BuildRootOnlyMasks(const std::filesystem::path& etc) {
  // Runs on every plan of a root caller (about a thousand entries on a Debian host): names are
  // looked up relative to an open directory (one path component each, no path objects for the
  // entries that need no mask), and only the few masks are sorted.
  std::vector<MountOp> ops;
  auto scan = [&](int parent_fd, const fs::path& dir, const char* name, bool descend,
                  auto& self) -> void {
    const int fd = ::openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    DIR* d = ::fdopendir(fd);  // owns fd from here
    if (d == nullptr) {
      ::close(fd);
      return;
    }
    while (const dirent* entry = ::readdir(d)) {
      const std::string_view child = entry->d_name;
      if (child == "." || child == ".." || entry->d_type == DT_LNK) continue;
      struct stat st;
      if (::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISLNK(st.st_mode)) continue;
      if ((st.st_mode & S_IROTH) == 0) {
        const std::optional<Identified> found = IdentifyAt(fd, entry->d_name, /*mask=*/true);
        ops.push_back({S_ISDIR(st.st_mode) ? MountOpKind::kMaskDirectory : MountOpKind::kMaskFile,
                       dir / child, /*optional=*/true, found ? found->id : FileId{}});
      } else if (descend && S_ISDIR(st.st_mode)) {
        self(fd, dir / child, entry->d_name, false, self);
      }
    }
    ::closedir(d);
  };
  scan(AT_FDCWD, etc, etc.c_str(), true, scan);
  std::sort(ops.begin(), ops.end(),
            [](const MountOp& a, const MountOp& b) { return a.path < b.path; });
  return ops;
}

}  // namespace cordon::plan
