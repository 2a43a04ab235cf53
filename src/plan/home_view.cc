#include "plan/home_view.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>

#include "core/paths.h"
#include "plan/toolchain_env.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// Sorted, each once, and only those inside no other.
void KeepOutermost(std::vector<fs::path>& paths) {
  std::sort(paths.begin(), paths.end());
  std::vector<fs::path> outer;
  for (fs::path& path : paths) {
    if (!core::IsWithinAny(path, outer)) outer.push_back(std::move(path));
  }
  paths = std::move(outer);
}

// The caller's PATH, split; entries that are not absolute are left out.
std::vector<fs::path> PathDirectories(const std::vector<std::string>& caller_env) {
  std::vector<fs::path> dirs;
  for (const std::string& entry : caller_env) {
    if (!entry.starts_with("PATH=")) continue;
    std::string_view rest = std::string_view(entry).substr(5);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (dir.starts_with('/')) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    break;  // the first PATH, as getenv finds it
  }
  return dirs;
}

// A home (the caller's, /root, any under /home), or one of the directories in a home that
// every tool shares (~/.config with its tokens, ~/.local/share with keyrings and browser data,
// ~/.cache): never granted for a toolchain's sake, only when the user names it.
bool TooBroadForAToolchain(const fs::path& path, const std::vector<fs::path>& homes) {
  auto is_home = [&](const fs::path& p) {
    return p == "/root" || p.parent_path() == "/home" || p.parent_path() == "/Users" ||
           std::find(homes.begin(), homes.end(), p) != homes.end();
  };
  if (is_home(path)) return true;
  const std::string& text = path.native();
  for (std::string_view shared : {"/.local", "/.local/share", "/.config", "/.cache"}) {
    if (text.ends_with(shared) && is_home(text.substr(0, text.size() - shared.size()))) {
      return true;
    }
  }
  return false;
}

// `path` resolved one component at a time, its links followed here: the real path, or nothing
// when it does not resolve or when a link met on the way lies in one of `roots` (which the
// command can write: where the path leads was then the command's to choose, e.g. a user's own
// `~/.local/bin -> ~/dotfiles/bin` with the workspace at ~/dotfiles and `bin` replaced there by
// a link to ~/.mozilla). One walk gives the verdict and the path, so no second resolution can
// see another tree.
std::optional<fs::path> ResolveOutsideRoots(const fs::path& path,
                                            const std::vector<fs::path>& roots) {
  constexpr int kMaxLinks = 40;  // as the kernel's own limit on nested links
  if (!path.is_absolute()) return std::nullopt;
  std::vector<std::string> todo;
  for (const fs::path& part : path.lexically_normal().relative_path()) todo.push_back(part);
  std::reverse(todo.begin(), todo.end());  // a stack: the next component last
  fs::path at = "/";
  int links = 0;
  while (!todo.empty()) {
    const std::string name = std::move(todo.back());
    todo.pop_back();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      at = at.parent_path();  // `at` holds no link: its parent is the real one
      continue;
    }
    const fs::path next = at / name;
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) return std::nullopt;
    if (!S_ISLNK(st.st_mode)) {
      at = next;
      continue;
    }
    if (++links > kMaxLinks || core::IsWithinAny(at, roots)) return std::nullopt;
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(next.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) return std::nullopt;
    target.resize(static_cast<std::size_t>(n));
    const fs::path link(target);
    if (link.is_absolute()) at = "/";
    std::vector<std::string> parts;
    for (const fs::path& part : link.relative_path()) parts.push_back(part);
    todo.insert(todo.end(), parts.rbegin(), parts.rend());
  }
  return at;
}

}  // namespace

HomeViewPlan PlanHomeView(const SandboxConfig& config, HomeView home,
                          const std::vector<fs::path>& homes, const std::vector<fs::path>& visible,
                          const std::vector<std::string>& caller_env,
                          const std::vector<fs::path>& private_areas,
                          const std::vector<MountEntry>& mounts) {
  HomeViewPlan view;
  std::vector<fs::path> candidates = homes;
  candidates.emplace_back("/home");
  candidates.emplace_back("/Users");  // macOS's homes (absent on Linux: skipped)
  if (::geteuid() != 0) candidates.emplace_back("/root");
  for (const fs::path& candidate : candidates) {
    const auto canonical = core::Canonical(candidate);
    struct stat st {};
    if (!canonical || canonical->native() == "/" || ::lstat(canonical->c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode)) {
      continue;
    }
    // Inside a writable root or the workspace it is the command's anyway; under /tmp or
    // /var/tmp the sandbox has private ones.
    if (core::IsWithinAny(*canonical, visible) || core::IsWithinAny(*canonical, private_areas))
      continue;
    view.areas.push_back(*canonical);
  }
  // The same trees mounted a second time elsewhere (a bind of /home into /srv): hidden there,
  // also when the homes themselves are shown read-only (the built-in masks are by path, and a
  // second mount would show every secret again). A directory only: a single file bound
  // elsewhere is not a home's tree. One inside a root the planner refuses (FindAliasInRoots).
  view.own_areas = view.areas;
  std::vector<fs::path> aliases;
  for (const fs::path& area : view.own_areas) {
    for (const Alias& alias : AliasesOf(area, mounts)) {
      struct stat st {};
      if (::lstat(alias.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      // Under an area (hidden), a root or a private tmp anyway; in a root the planner refuses
      // what the root does not show anyway (FindAliasInRoots).
      if (core::IsWithinAny(alias.path, view.own_areas) || core::IsWithinAny(alias.path, visible) ||
          core::IsWithinAny(alias.path, private_areas)) {
        continue;
      }
      aliases.push_back(alias.path);
    }
  }
  if (home != HomeView::kHidden) {
    KeepOutermost(view.own_areas);
    view.areas = std::move(aliases);
    KeepOutermost(view.areas);
    return view;
  }
  view.areas.insert(view.areas.end(), aliases.begin(), aliases.end());
  // The outermost of nested areas (a home below /home) covers the others.
  KeepOutermost(view.own_areas);
  KeepOutermost(view.areas);
  if (view.areas.empty()) return view;

  // The built-in tool paths, the caller's PATH and the toolchain variables: for a toolchain's
  // sake, never a home or a directory every tool shares, nor through a link a command made.
  std::vector<fs::path> wanted;
  std::vector<fs::path> toolchain;
  for (const fs::path& caller_home : homes) {
    for (std::string_view tool : kHomeToolPaths) toolchain.push_back(caller_home / tool);
  }
  for (const fs::path& dir : PathDirectories(caller_env)) {
    toolchain.push_back(dir);
    // A toolchain's bin directory loads from its prefix (~/miniconda3/bin from
    // ~/miniconda3/lib, ~/.nvm/versions/node/v22/bin from .../lib): the prefix too.
    if (dir.filename() == "bin") toolchain.push_back(dir.parent_path());
  }
  // Where the caller's toolchain variables say a toolchain is (RUSTUP_HOME, JAVA_HOME, ...).
  const std::vector<fs::path> named = ToolchainDirectories(caller_env);
  toolchain.insert(toolchain.end(), named.begin(), named.end());
  for (const fs::path& path : toolchain) {
    // Never through a link the command could have made: a PATH entry or VIRTUAL_ENV in the
    // workspace that resolves out of it (`.venv -> ~/.mozilla`, made by an earlier command), a
    // tool path re-pointed from a writable root (`~/go/bin -> ~/other`).
    const auto canonical = ResolveOutsideRoots(path, visible);
    // For a toolchain's sake never a home or a directory every tool shares, nor anything in a
    // home's second mount (its real path is the one to grant).
    if (!canonical || !core::IsWithinAny(*canonical, view.own_areas) ||
        TooBroadForAToolchain(*canonical, homes)) {
      continue;
    }
    wanted.push_back(*canonical);
  }
  // The user's own grants are theirs, but not through a link a command could have made either.
  for (const fs::path& path : config.readable_paths) {
    if (const auto canonical = ResolveOutsideRoots(path, visible)) wanted.push_back(*canonical);
  }
  for (const fs::path& canonical : wanted) {
    // Only what lies strictly inside an area needs granting; an area itself is never granted
    // whole (a PATH entry that is the home, say), nor is what a root already shows.
    const bool inside = std::any_of(view.areas.begin(), view.areas.end(), [&](const fs::path& a) {
      return canonical != a && core::IsWithin(canonical, a);
    });
    if (!inside || core::IsWithinAny(canonical, visible)) continue;
    view.grants.push_back(canonical);
  }
  // A grant inside another rides along in its bind.
  KeepOutermost(view.grants);
  return view;
}

bool HiddenByHomeView(const HomeViewPlan& view, const std::vector<fs::path>& holes,
                      const fs::path& path) {
  return core::IsWithinAny(path, view.areas) && !core::IsWithinAny(path, holes);
}

void AddHomeView(const HomeViewPlan& view, const std::vector<fs::path>& holes,
                 std::vector<MountOp>& mounts) {
  if (view.areas.empty()) return;
  std::erase_if(mounts, [&](const MountOp& op) {
    const bool mask = op.kind == MountOpKind::kMaskDirectory || op.kind == MountOpKind::kMaskFile;
    const bool pin = op.kind == MountOpKind::kBindWritable && op.optional;
    return (mask || pin) && HiddenByHomeView(view, holes, op.path);
  });
  std::vector<MountOp> areas;
  for (const fs::path& area : view.areas) areas.push_back({MountOpKind::kHomeView, area});
  mounts.insert(mounts.begin(), areas.begin(), areas.end());
  for (const fs::path& grant : view.grants) mounts.push_back({MountOpKind::kBindReadOnly, grant});
}

}  // namespace cordon::plan
