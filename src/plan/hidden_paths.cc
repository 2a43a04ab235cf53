#include "plan/hidden_paths.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/paths.h"
#include "plan/mount_identity.h"
#include "plan/mount_ops.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// `answered`: the user database gave an answer (an entry or none), not an error.
fs::path LookUpPasswdHome(uid_t uid, bool& answered) {
  passwd entry{};
  passwd* found = nullptr;
  std::string buffer(16384, '\0');
  answered = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0;
  if (!answered || found == nullptr || found->pw_dir == nullptr || found->pw_dir[0] != '/') {
    return {};
  }
  return found->pw_dir;
}

// The user's home in the user database. Every plan asks, and a long-lived session plans every
// command: the answer is kept while the effective uid and /etc/passwd (its identity, size and
// times) stay the same, which costs one stat instead of the C library's lookup.
fs::path PasswdHome() {
  struct Key {
    uid_t uid = 0;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    timespec mtime{};
    timespec ctime{};
    bool operator==(const Key& o) const {
      return uid == o.uid && dev == o.dev && ino == o.ino && size == o.size &&
             mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec &&
             ctime.tv_sec == o.ctime.tv_sec && ctime.tv_nsec == o.ctime.tv_nsec;
    }
  };
  // Never destroyed: a session's threads may still plan while static destructors run.
  struct Cache {
    std::mutex mutex;
    std::optional<Key> key;
    fs::path home;
  };
  static Cache* cache = new Cache();
  bool answered = false;
  struct stat st {};
  if (::stat("/etc/passwd", &st) != 0) return LookUpPasswdHome(::geteuid(), answered);
#if defined(__APPLE__)
  const Key key{::geteuid(), st.st_dev, st.st_ino, st.st_size, st.st_mtimespec, st.st_ctimespec};
#else
  const Key key{::geteuid(), st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
#endif
  {
    std::lock_guard lock(cache->mutex);
    if (cache->key && *cache->key == key) return cache->home;
  }
  fs::path home = LookUpPasswdHome(key.uid, answered);
  if (!answered) return home;  // an error (NSS, EMFILE) is asked again next time
  std::lock_guard lock(cache->mutex);
  cache->key = key;
  cache->home = home;
  return home;
}

// A hidden path's place, found with one lstat per component below a canonical base (a home
// from CallerHomes, or "/"): realpath would readlink every component of the whole path, the
// base's included, for each of the ~20 candidates of every plan.
struct Walked {
  enum class Kind {
    kPresent,  // `path` is canonical and exists
    kAbsent,   // nothing there: `path` is where a secret would appear
    kNeither,  // a non-directory on the way, or no access: neither masked nor left out
    kSlow,     // a symlink, "." or "..": resolve it as realpath does
  };
  Kind kind;
  fs::path path;
  bool directory = false;
  FileId id;
};

// `dirs`: each directory a name is looked up in (the base and each directory walked into).
Walked Walk(const fs::path& base, const fs::path& relative, std::vector<fs::path>* dirs) {
  if (relative.empty()) return {Walked::Kind::kSlow, {}};
  fs::path walked = base;
  struct stat st {};
  for (auto it = relative.begin(); it != relative.end(); ++it) {
    const std::string& name = it->native();
    if (name.empty() || name == "." || name == "..") return {Walked::Kind::kSlow, {}};
    if (dirs != nullptr) dirs->push_back(walked);
    walked /= *it;
    if (::lstat(walked.c_str(), &st) != 0) {
      if (errno != ENOENT) return {Walked::Kind::kNeither, {}};
      // A missing last component lies in its parent, which the walk found canonical; a missing
      // ancestor leaves no canonical parent, so the path stays as written.
      const bool last = std::next(it) == relative.end();
      return {Walked::Kind::kAbsent, last ? walked : (base / relative).lexically_normal()};
    }
    if (S_ISLNK(st.st_mode)) return {Walked::Kind::kSlow, {}};
  }
  return {Walked::Kind::kPresent, walked, S_ISDIR(st.st_mode)};
}

// The general case (a symlinked secret is hidden at its target): realpath, then lstat.
Walked Resolve(const fs::path& path) {
  if (auto canonical = core::Canonical(path)) {
    struct stat st;
    if (::lstat(canonical->c_str(), &st) != 0) return {Walked::Kind::kNeither, {}};
    return {Walked::Kind::kPresent, *canonical, S_ISDIR(st.st_mode)};
  }
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return {Walked::Kind::kNeither, {}};
  auto parent = core::Canonical(path.parent_path());
  return {Walked::Kind::kAbsent, parent ? *parent / path.filename() : path.lexically_normal()};
}

// "/a/b" -> "/a", "/a" -> "/", "/" -> "/" (absolute paths without a trailing slash).
std::string_view ParentOf(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? std::string_view("/")
                                                       : path.substr(0, slash);
}

void AddOnce(std::vector<HiddenTarget>& list, HiddenTarget target) {
  const bool duplicate = std::any_of(list.begin(), list.end(),
                                     [&](const HiddenTarget& t) { return t.path == target.path; });
  if (!duplicate) list.push_back(std::move(target));
}

// Whether the sandbox's view contains `path`: the private /tmp and /var/tmp replace the host's,
// except where a writable root (or the read-only bound workspace) is bound back in.
bool InView(const fs::path& path, const std::vector<fs::path>& roots, const fs::path& workspace) {
  const bool held = core::IsWithin(path, workspace) || core::IsWithinAny(path, roots);
  if (held) return true;
  if (core::IsWithin(path, kPrivateTmp)) return false;
  auto var_tmp = core::Canonical("/var/tmp");
  return !(var_tmp && core::IsWithin(path, *var_tmp));
}

}  // namespace

std::vector<fs::path> CallerHomes(const fs::path& home) {
  std::vector<fs::path> homes;
  for (const fs::path& candidate : {home, PasswdHome()}) {
    if (candidate.empty() || !candidate.is_absolute()) continue;
    auto canonical = core::Canonical(candidate);
    if (canonical && std::find(homes.begin(), homes.end(), *canonical) == homes.end()) {
      homes.push_back(*canonical);
    }
  }
  return homes;
}

HiddenScan ScanHiddenPaths(const SandboxConfig& config, const std::vector<fs::path>& homes,
                           ScannedDirs* seen) {
  HiddenScan scan;
  auto place = [&](const fs::path& base, const fs::path& relative) {
    Walked walked = Walk(base, relative, seen != nullptr ? &seen->dirs : nullptr);
    if (walked.kind == Walked::Kind::kSlow) {
      if (seen != nullptr) seen->exact = false;
      walked = Resolve(base / relative);
    }
    if (walked.kind == Walked::Kind::kPresent) {
      // What its mask will be made over (mount_identity.h).
      if (auto found = IdentifyAt(AT_FDCWD, walked.path.c_str(), /*mask=*/true)) {
        walked.id = found->id;
      }
      AddOnce(scan.present, {std::move(walked.path), walked.directory, walked.id});
    } else if (walked.kind == Walked::Kind::kAbsent) {
      AddOnce(scan.absent, {std::move(walked.path), /*directory=*/false});
    }
  };
  for (const fs::path& home : homes) {
    for (std::string_view relative : kBuiltinHiddenPaths) place(home, fs::path(relative));
  }
  for (const auto* list : {&config.hidden_paths, &config.own_config}) {
    for (const fs::path& path : *list) {
      if (path.is_absolute()) place(path.root_path(), path.relative_path());
    }
  }
  return scan;
}

std::vector<HiddenTarget> FindHiddenTargets(const SandboxConfig& config,
                                            const std::vector<fs::path>& homes) {
  return ScanHiddenPaths(config, homes).present;
}

std::vector<HiddenTarget> FindAbsentHiddenPaths(const SandboxConfig& config,
                                                const std::vector<fs::path>& homes) {
  return ScanHiddenPaths(config, homes).absent;
}

std::vector<MountOp> BuildHiddenPathOps(const std::vector<HiddenTarget>& targets,
                                        const std::vector<fs::path>& writable_roots,
                                        const fs::path& workspace) {
  std::vector<MountOp> pins;
  std::vector<MountOp> masks;
  for (const HiddenTarget& target : targets) {
    if (!InView(target.path, writable_roots, workspace)) continue;
    for (const fs::path& root : writable_roots) {
      if (!core::IsWithin(target.path, root) || target.path == root) continue;
      // Ancestors strictly between the root and the target, outermost first.
      std::vector<fs::path> ancestors;
      for (fs::path a = target.path.parent_path(); a != root && core::IsWithin(a, root);
           a = a.parent_path()) {
        ancestors.push_back(a);
      }
      for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it) {
        const bool seen = std::any_of(pins.begin(), pins.end(),
                                      [&](const MountOp& op) { return op.path == *it; });
        if (!seen) pins.push_back({MountOpKind::kBindWritable, *it, /*optional=*/true});
      }
    }
    masks.push_back({target.directory ? MountOpKind::kMaskDirectory : MountOpKind::kMaskFile,
                     target.path, /*optional=*/false, target.id});
  }
  // Pins first: a pin binds the host directory with its content, and a mask inside it must
  // land on top of that bind, not underneath it.
  pins.insert(pins.end(), masks.begin(), masks.end());
  return pins;
}

std::vector<fs::path> ReadAllowList(const std::vector<HiddenTarget>& targets, ScannedDirs* seen,
                                    const fs::path& base) {
  // Plain strings, not fs::path: its comparisons split both paths into components, and this
  // runs for every command (the paths are absolute and canonical or lexically normal).
  const std::string& top = base.native();
  std::set<std::string, std::less<>> hidden;
  std::set<std::string, std::less<>> split;  // ancestors of a hidden path: their other entries
  for (const HiddenTarget& target : targets) {
    if (!core::IsWithinText(target.path.native(), top)) continue;
    if (target.path.native() == top) return {};  // the base itself is hidden
    hidden.insert(target.path.native());
    for (std::string_view a = ParentOf(target.path.native());; a = ParentOf(a)) {
      split.emplace(a);
      if (a == top || a == "/") break;
    }
  }
  std::vector<fs::path> readable;
  if (split.empty()) {
    readable.push_back(base);
    return readable;
  }
  std::vector<std::string> granted;
  for (const std::string& dir : split) {
    // A hidden directory that holds another hidden path grants none of its entries.
    if (std::any_of(hidden.begin(), hidden.end(),
                    [&](const std::string& h) { return core::IsWithinText(dir, h); })) {
      continue;
    }
    std::optional<std::vector<core::DirectoryEntry>> entries = core::ListDirectoryTyped(dir);
    // One that cannot be opened (missing, say) grants nothing; its coming into being is seen
    // in its parent, which is listed too (every ancestor is).
    if (!entries) continue;
    if (seen != nullptr) seen->dirs.emplace_back(dir);
    for (core::DirectoryEntry& entry : *entries) {
      if (hidden.contains(entry.path) || split.contains(entry.path)) continue;
      if (entry.type == DT_LNK) continue;
      if (entry.type == DT_UNKNOWN) {
        struct stat st;
        if (::lstat(entry.path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
      }
      granted.push_back(std::move(entry.path));
    }
  }
  std::sort(granted.begin(), granted.end());
  readable.reserve(granted.size());
  for (std::string& path : granted) readable.emplace_back(std::move(path));
  return readable;
}

}  // namespace cordon::plan
