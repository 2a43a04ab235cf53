#include "plan/hidden_paths.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <string>

#include "core/paths.h"
#include "plan/mount_ops.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

fs::path PasswdHome() {
  passwd entry{};
  passwd* found = nullptr;
  std::string buffer(16384, '\0');
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr || found->pw_dir == nullptr || found->pw_dir[0] != '/') {
    return {};
  }
  return found->pw_dir;
}

void AddTarget(std::vector<HiddenTarget>& targets, const fs::path& path) {
  auto canonical = core::Canonical(path);  // follows a symlinked secret to its target
  if (!canonical) return;
  struct stat st;
  if (::lstat(canonical->c_str(), &st) != 0) return;
  const bool duplicate = std::any_of(targets.begin(), targets.end(),
                                     [&](const HiddenTarget& t) { return t.path == *canonical; });
  if (!duplicate) targets.push_back({*canonical, S_ISDIR(st.st_mode)});
}

// Whether the sandbox's view contains `path`: the private /tmp and /var/tmp replace the host's,
// except where a writable root (or the read-only bound workspace) is bound back in.
bool InView(const fs::path& path, const std::vector<fs::path>& roots, const fs::path& workspace) {
  const bool held = core::IsWithin(path, workspace) ||
                    std::any_of(roots.begin(), roots.end(),
                                [&](const fs::path& r) { return core::IsWithin(path, r); });
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

std::vector<HiddenTarget> FindHiddenTargets(const SandboxConfig& config,
                                            const std::vector<fs::path>& homes) {
  std::vector<HiddenTarget> targets;
  for (const fs::path& home : homes) {
    for (std::string_view relative : kBuiltinHiddenPaths) AddTarget(targets, home / relative);
  }
  for (const fs::path& path : config.hidden_paths) {
    if (path.is_absolute()) AddTarget(targets, path);
  }
  return targets;
}

std::vector<HiddenTarget> FindAbsentHiddenPaths(const SandboxConfig& config,
                                                const std::vector<fs::path>& homes) {
  std::vector<HiddenTarget> absent;
  auto add = [&](const fs::path& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 || errno != ENOENT) return;
    auto parent = core::Canonical(path.parent_path());
    fs::path where = parent ? *parent / path.filename() : path.lexically_normal();
    if (std::none_of(absent.begin(), absent.end(),
                     [&](const HiddenTarget& t) { return t.path == where; })) {
      absent.push_back({where, /*directory=*/false});
    }
  };
  for (const fs::path& home : homes) {
    for (std::string_view relative : kBuiltinHiddenPaths) add(home / relative);
  }
  for (const fs::path& path : config.hidden_paths) {
    if (path.is_absolute()) add(path);
  }
  return absent;
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
                     target.path, /*optional=*/false});
  }
  // Pins first: a pin binds the host directory with its content, and a mask inside it must
  // land on top of that bind, not underneath it.
  pins.insert(pins.end(), masks.begin(), masks.end());
  return pins;
}

std::vector<fs::path> ReadAllowList(const std::vector<HiddenTarget>& targets) {
  std::set<fs::path> hidden;
  std::set<fs::path> split;  // ancestors of a hidden path: only their other entries are granted
  for (const HiddenTarget& target : targets) {
    hidden.insert(target.path);
    for (fs::path a = target.path.parent_path();; a = a.parent_path()) {
      split.insert(a);
      if (a == a.root_path()) break;
    }
  }
  std::vector<fs::path> readable;
  if (split.empty()) {
    readable.emplace_back("/");
    return readable;
  }
  for (const fs::path& dir : split) {
    // A hidden directory that holds another hidden path grants none of its entries.
    if (std::any_of(hidden.begin(), hidden.end(),
                    [&](const fs::path& h) { return core::IsWithin(dir, h); })) {
      continue;
    }
    for (const fs::path& path : core::ListDirectory(dir)) {
      if (hidden.contains(path) || split.contains(path)) continue;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
      readable.push_back(path);
    }
  }
  std::sort(readable.begin(), readable.end());
  return readable;
}

}  // namespace cordon::plan
