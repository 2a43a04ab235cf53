// Plan and DescribeCapabilities: the pure decisions of the native backend. Everything here is
// computed from the config, the kernel probe and the request; the backend only replays it.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "config/host_run_files.h"
#include "core/paths.h"
#include "linux/system_headers/landlock.h"
#include "plan/assessment.h"
#include "plan/backend_selection.h"
#include "plan/environment.h"
#include "plan/hidden_paths.h"
#include "plan/hidden_watch.h"
#include "plan/home_aliases.h"
#include "plan/home_view.h"
#include "plan/host_ipc.h"
#include "plan/host_run_paths.h"
#include "plan/launch_plan.h"
#include "plan/mount_identity.h"
#include "plan/mount_ops.h"
#include "plan/nested_projects.h"
#include "plan/network_domains.h"
#include "plan/plan_caches.h"
#include "plan/root_only_watch.h"
#include "plan/tool_caches.h"
#include "plan/toolchain_env.h"
#include "plan/view_protection.h"

namespace cordon::plan {
namespace {

namespace lsys = linux_native::sys;

std::string JoinMissing(const std::vector<std::string>& missing) {
  std::string text = "cannot sandbox as configured (fail closed): ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) text += "; ";
    text += missing[i];
  }
  return text;
}

// The writable roots of `config` for `workspace`; none when one cannot be resolved.
std::vector<std::filesystem::path> RootsOf(const SandboxConfig& config,
                                           const std::filesystem::path& workspace) {
  Result<std::vector<std::filesystem::path>> roots = WritableRoots(config, workspace);
  return roots ? *std::move(roots) : std::vector<std::filesystem::path>{};
}

// The entries the fallback's protections name in the protected roots themselves (not in the
// projects nested below them): `.git` and every host-run entry, present or not.
std::vector<std::filesystem::path> RootEntries(const SandboxConfig& config,
                                               const std::filesystem::path& workspace,
                                               const std::vector<std::filesystem::path>& roots) {
  std::vector<std::filesystem::path> entries;
  const std::vector<std::string> host_run = config::HostRunFiles(config);
  for (const std::filesystem::path& root : ProtectedRoots(config, workspace, roots)) {
    if (config.protect_git_metadata) entries.push_back(root / ".git");
    for (std::string_view entry : host_run) {
      if (entry.ends_with('/')) entry.remove_suffix(1);
      entries.push_back(root / entry);
    }
  }
  return entries;
}

Result<std::filesystem::path> ResolveCwd(const PlanRequest& request) {
  if (request.cwd.empty()) return request.workspace;
  CORDON_TRY(std::filesystem::path cwd, core::Canonical(request.cwd));
  if (!core::IsWithin(cwd, request.workspace)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("working directory {} is outside the workspace {}", cwd.string(),
                            request.workspace.string()));
  }
  return cwd;
}

// Where `path`, which does not exist, would be created: below its nearest existing ancestor
// made canonical (the writable roots are canonical).
std::filesystem::path WhereCreated(const std::filesystem::path& path) {
  std::filesystem::path missing;
  for (std::filesystem::path at = path.lexically_normal(); at.has_relative_path();
       at = at.parent_path()) {
    missing = missing.empty() ? at.filename() : at.filename() / missing;
    if (auto canonical = core::Canonical(at.parent_path())) return *canonical / missing;
  }
  return path.lexically_normal();
}

// A workspace_write root that is "/" or holds a home would make the whole home writable:
// shell profiles, ~/.config, and the credential directories (a missing ~/.ssh or
// ~/.config/cordon could be created and planted). Refused, never narrowed silently.
Result<void> CheckWritableRoots(const Config& config, const PlanRequest& request,
                                const std::vector<std::filesystem::path>& homes) {
  if (config.sandbox.mode != SandboxMode::kWorkspaceWrite) return {};
  std::vector<std::filesystem::path> roots = {request.workspace};
  for (const auto& configured : config.sandbox.writable_roots) {
    if (auto canonical = core::Canonical(configured)) roots.push_back(*canonical);
  }
  for (const auto& root : roots) {
    const bool is_workspace = root == request.workspace;
    const char* what = is_workspace ? "workspace" : "writable root";
    if (root == root.root_path()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("the {} is the root directory /: everything would be writable "
                              "(fix: run cordon from a project directory)",
                              what));
    }
    for (const auto& home : homes) {
      if (core::IsWithin(home, root)) {
        return Fail(
            ErrorCode::kInvalidArgument,
            fmt::format("the {} {} {} the home directory {}: the whole home, its "
                        "credentials and shell profiles included, would be writable (fix: "
                        "run cordon from a project directory below the home, or use "
                        "--mode read_only)",
                        what, root.string(), root == home ? "is" : "contains", home.string()));
      }
    }
  }
  // The config this process actually reads (elsewhere with XDG_CONFIG_HOME or --config) is
  // never inside a writable root, by its name, by what that resolves to, or where it would be
  // created: a command could rewrite or replace it (a link, a file saved over it, a directory
  // made above it) and switch the sandbox off for the next run that reads it.
  for (const auto& written : config.sandbox.own_config) {
    std::vector<std::filesystem::path> places = {written.lexically_normal(), WhereCreated(written)};
    if (auto canonical = core::Canonical(written)) places.push_back(*canonical);
    for (const auto& place : places) {
      for (const auto& root : roots) {
        if (!core::IsWithin(place, root)) continue;
        return Fail(ErrorCode::kInvalidArgument,
                    fmt::format("cordon's own config {} lies inside the writable root {}: a "
                                "command could rewrite it and switch the sandbox off for later "
                                "runs (fix: keep the config outside the workspace and every "
                                "writable root)",
                                written.string(), root.string()));
      }
    }
  }
  // cordon's own config directory in each home: a config.json planted there would switch the
  // sandbox off for every later session. An existing one is masked read-only; an absent one
  // inside a writable root could be created, so it must exist first.
  std::vector<std::filesystem::path> own_paths;
  for (const auto& home : homes) own_paths.push_back(home / ".config" / "cordon");
  for (const auto& written : own_paths) {
    struct stat st;
    if (::lstat(written.c_str(), &st) == 0) continue;
    const std::filesystem::path own = WhereCreated(written);
    for (const auto& root : roots) {
      if (!core::IsWithin(own, root)) continue;
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("the writable root {} would let the command create cordon's own "
                              "config directory {} and switch the sandbox off for later "
                              "sessions (fix: mkdir -p -m 700 {}; it is then hidden read-only)",
                              root.string(), own.string(), own.string()));
    }
  }
  return {};
}

// Landlock as the second layer on writes (the first when there is no mount namespace), TCP
// rules only when nothing else denies the network, IPC scoping where the ABI has it, and in the
// fallback a read allow-list that leaves the hidden paths out.
LandlockRules BuildLandlock(const Config& config, const Assessment& a, int abi,
                            const std::vector<std::filesystem::path>& writable_roots) {
  LandlockRules rules;
  if (abi < 1) return rules;
  rules.abi = abi;
  rules.handled_fs = lsys::WriteFsAccess(abi);  // from ABI 9 also pathname-socket connects
  rules.writable = writable_roots;
  // The private tmpfs mounts exist only with a mount namespace; without one /tmp is the host's
  // (the backend then adds its own private directory).
  if (a.namespaces.mount) {
    rules.writable.emplace_back(kPrivateTmp);
    if (auto var_tmp = core::Canonical("/var/tmp"); var_tmp && *var_tmp != kPrivateTmp) {
      rules.writable.push_back(*var_tmp);
    }
  }
  // /dev/null, /dev/tty and the pts instance are written by ordinary tools.
  rules.writable.emplace_back("/dev");
  // Name resolution through systemd-resolved's varlink socket is DNS, which network allow
  // grants (ABI 9 handles socket connects; the /run masks keep the rest of /run away).
  if (abi >= 9 && config.sandbox.network == NetworkPolicy::kAllow) {
    if (auto resolve = core::Canonical("/run/systemd/resolve")) rules.writable.push_back(*resolve);
  }
  if (a.landlock_tcp) rules.handled_net = lsys::kAccessNetBindTcp | lsys::kAccessNetConnectTcp;
  if (abi >= 6) {
    // Host abstract sockets (X11, D-Bus, ...) are host-local IPC, which cordon hides whatever
    // the network setting (docs/decisions/0004); the process tree cannot signal outside.
    rules.scoped = lsys::kScopeSignal | lsys::kScopeAbstractUnixSocket;
  }
  return rules;
}

// Where a sandboxed connect() may reach a pathname socket: the writable areas (not /dev, which
// Landlock's write rule covers for /dev/null and the terminal), and with network allow the
// resolver's socket, as Landlock ABI 9 has it (BuildLandlock).
std::vector<std::filesystem::path> UnixConnectBeneath(
    const Config& config, const Assessment& a,
    const std::vector<std::filesystem::path>& writable_roots) {
  std::vector<std::filesystem::path> beneath = writable_roots;
  if (a.namespaces.mount) {
    beneath.emplace_back(kPrivateTmp);
    if (auto var_tmp = core::Canonical("/var/tmp"); var_tmp && *var_tmp != kPrivateTmp) {
      beneath.push_back(*var_tmp);
    }
  }
  if (config.sandbox.network == NetworkPolicy::kAllow) {
    if (auto resolve = core::Canonical("/run/systemd/resolve")) beneath.push_back(*resolve);
  }
  return beneath;
}

// A protected root or nested project whose mode keeps cordon from looking inside (lstat of its
// .git, making placeholders) while the command, as its owner, could restore the mode and then
// write what was never protected: refused. One of another user's stays as closed to the
// command as to cordon.
Result<void> CheckSearchable(const std::vector<std::filesystem::path>& roots) {
  for (const std::filesystem::path& root : roots) {
    if (::faccessat(AT_FDCWD, root.c_str(), R_OK | W_OK | X_OK, AT_EACCESS) == 0) continue;
    struct stat st {};
    if (errno != EACCES || ::lstat(root.c_str(), &st) != 0 || st.st_uid != ::geteuid()) continue;
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot look inside {} to keep its .git and host-run files read-only: "
                            "its mode ({:o}) denies you, and a command could change it back. "
                            "Restore it: chmod u+rwx {}",
                            root.string(), st.st_mode & 07777, root.string()));
  }
  return {};
}

// The trees the sandbox makes its own for each command: nothing written there reaches the host.
constexpr const char* kSandboxOwnTrees[] = {"/dev", "/proc", "/sys"};

// A writable root where the sandbox puts a view of its own would never reach the host: the
// command's /dev and /proc are made for it, and a hidden path is masked over whatever is bound
// there. Refused with the reason instead of silently writing into something that vanishes.
Result<void> CheckRootsReachTheHost(const std::vector<std::filesystem::path>& roots,
                                    const std::vector<HiddenTarget>& hidden) {
  for (const std::filesystem::path& root : roots) {
    for (const char* own : kSandboxOwnTrees) {
      if (!core::IsWithin(root, own)) continue;
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("writable root {}: {} is the sandbox's own inside (a private one for "
                              "each command), so writes there would never reach the host (fix: "
                              "remove it from writable_roots, or use a directory elsewhere)",
                              root.string(), own));
    }
    for (const HiddenTarget& target : hidden) {
      if (!target.directory || !core::IsWithin(root, target.path)) continue;
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("writable root {} lies in the hidden path {}, which the sandbox "
                              "masks with an empty directory: it would be neither readable nor "
                              "writable (fix: remove it from writable_roots, or the hidden path "
                              "from sandbox.hidden_paths if it is yours to expose)",
                              root.string(), target.path.string()));
    }
  }
  return {};
}

// The session's tool cache directory, unless this run cannot have one: not in workspace_write
// mode or with tool_caches off (a session's config asked for none), or in a place the sandbox
// makes its own (/dev, /proc, /sys) or masks (a hidden directory): the caches then stay in the
// private HOME, as with off, rather than refusing work a cache only speeds up.
std::filesystem::path UsableToolCache(const SandboxConfig& config, const std::filesystem::path& dir,
                                      const std::vector<HiddenTarget>& hidden) {
  if (dir.empty() || config.mode != SandboxMode::kWorkspaceWrite ||
      config.tool_caches == ToolCaches::kOff) {
    return {};
  }
  for (const char* own : kSandboxOwnTrees) {
    if (core::IsWithin(dir, own)) return {};
  }
  for (const HiddenTarget& target : hidden) {
    if (core::IsWithin(dir, target.path)) return {};
  }
  return dir;
}

// The private /tmp and /var/tmp: a home below either is replaced anyway.
std::vector<std::filesystem::path> PrivateAreas() {
  std::vector<std::filesystem::path> areas = {kPrivateTmp};
  if (auto var_tmp = core::Canonical("/var/tmp")) areas.push_back(*var_tmp);
  return areas;
}

// Landlock's read allow-list with the hidden home: the areas left out like hidden directories
// (a secret inside one needs no hole of its own), the grants let in.
std::vector<std::filesystem::path> ReadableAroundHomeView(
    const HiddenView& view, AllowList list, const HomeViewPlan& home_view,
    const std::vector<std::filesystem::path>& holes) {
  std::vector<HiddenTarget> targets = view.scan.present;
  if (list == AllowList::kPresentAndAbsent) {
    targets.insert(targets.end(), view.scan.absent.begin(), view.scan.absent.end());
  }
  std::erase_if(targets,
                [&](const HiddenTarget& t) { return HiddenByHomeView(home_view, holes, t.path); });
  // Each grant whole, unless a secret lies in it (present or absent: one the host creates
  // during the run must stay unreadable too): then around it.
  std::vector<std::filesystem::path> granted;
  for (const std::filesystem::path& grant : home_view.grants) {
    std::vector<std::filesystem::path> inside = ReadAllowList(targets, nullptr, grant);
    granted.insert(granted.end(), inside.begin(), inside.end());
  }
  for (const std::filesystem::path& area : home_view.areas) {
    targets.push_back({area, /*directory=*/true, {}});
  }
  std::vector<std::filesystem::path> readable = ReadAllowList(targets);
  readable.insert(readable.end(), granted.begin(), granted.end());
  return readable;
}

}  // namespace

Result<LaunchPlan> Plan(const Config& config, const linux_native::KernelFeatures& features,
                        const PlanRequest& request, const BackendProbes& backends) {
  if (request.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "empty command");
  if (!request.workspace.is_absolute()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("workspace {} is not an absolute path", request.workspace.string()));
  }
  // The session's workspace must still be the directory it was: a name swapped for a symlink
  // or for another directory (by a command that can write its parent) is not planned for.
  if (request.workspace_id != FileId{}) {
    const std::optional<Identified> now =
        IdentifyAt(AT_FDCWD, request.workspace.c_str(), /*mask=*/false);
    if (!now || now->id != request.workspace_id || !S_ISDIR(now->mode)) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("the workspace {} is no longer the directory this session started "
                              "in (replaced, moved or swapped for a link): nothing runs there "
                              "(fix: start a new session in the directory you mean)",
                              request.workspace.string()));
    }
  }
  // The same for each configured writable root the session pinned: a root nested in the
  // workspace that a command replaced with a link must not become a bind of the link's target.
  const bool roots_pinned = !request.writable_root_ids.empty();
  if (roots_pinned && config.sandbox.mode == SandboxMode::kWorkspaceWrite) {
    if (request.writable_root_ids.size() != config.sandbox.writable_roots.size()) {
      return Fail(ErrorCode::kInvalidArgument, "writable roots and their pins do not match");
    }
    for (std::size_t i = 0; i < request.writable_root_ids.size(); ++i) {
      const std::filesystem::path& root = config.sandbox.writable_roots[i];
      const std::optional<Identified> now = IdentifyAt(AT_FDCWD, root.c_str(), /*mask=*/false);
      if (!now || now->id != request.writable_root_ids[i] || S_ISLNK(now->mode)) {
        return Fail(ErrorCode::kUnavailable,
                    fmt::format("the writable root {} is no longer what this session started "
                                "with (replaced, moved or swapped for a link): nothing runs "
                                "(fix: restore it, or start a new session)",
                                root.string()));
      }
    }
  }
  LaunchPlan plan;
  plan.argv = request.argv;
  plan.workspace = request.workspace;
  CORDON_TRY(plan.cwd, ResolveCwd(request));

  Assessment a = Assess(config, features, backends);
  plan.enforcement = a.enforcement;
  if (config.sandbox.mode == SandboxMode::kOff) {
    // Unsandboxed on purpose (explicit `off` / --unsafe): the caller's own behaviour, including
    // its environment.
    plan.sandboxed = false;
    plan.env = request.caller_env;
  }
  if (!a.missing.empty()) return Fail(ErrorCode::kUnavailable, JoinMissing(a.missing));
  // Cannot fail here: Assess ran the same check (AssessLimits).
  CORDON_TRY(plan.limits, limits::PlanLimits(config.limits, features.limits, a.namespaces.user));
  if (!plan.sandboxed) return plan;

  CORDON_TRY(std::vector<std::filesystem::path> roots,
             WritableRoots(config.sandbox, request.workspace, roots_pinned));
  const std::vector<std::filesystem::path> homes = CallerHomes(request.caller_home);
  CORDON_TRY_VOID(CheckWritableRoots(config, request, homes));
  // Masks where a mount namespace (or Seatbelt's profile) can place them, with Landlock's read
  // allow-list around present and absent secrets as a second layer; the fallback has only the
  // allow-list, around the present ones.
  const bool masks = a.namespaces.mount || a.path_rules;
  // Seatbelt's path rules deny the absent ones by name (LaunchPlan::absent_hidden).
  const AllowList list = !masks                                       ? AllowList::kPresent
                         : features.landlock_abi >= 1 || a.path_rules ? AllowList::kPresentAndAbsent
                                                                      : AllowList::kNone;
  HiddenView view = request.caches != nullptr
                        ? request.caches->hidden.View(config.sandbox, homes, list)
                        : BuildHiddenView(config.sandbox, homes, list);
  const std::vector<HiddenTarget>& hidden = view.scan.present;
  // The tools' caches (decision 0041): bound writable unless a root holds them already.
  const std::filesystem::path tool_cache =
      UsableToolCache(config.sandbox, request.tool_cache, hidden);
  const bool bind_cache = !tool_cache.empty() && !core::IsWithinAny(tool_cache, roots);
  std::vector<std::filesystem::path> writable = roots;
  if (bind_cache) writable.push_back(tool_cache);
  // The hidden home needs a view to hide it in (decision 0038), or Seatbelt's path rules:
  // Landlock's read rules alone would leave every name in it listable.
  std::vector<std::filesystem::path> visible = writable;
  visible.push_back(request.workspace);
  const std::vector<MountEntry> mount_table = ReadMountTable();
  // /tmp and /var/tmp are private only with a mount namespace: the fallback shows the host's.
  const HomeViewPlan home_view = PlanHomeView(
      config.sandbox, a.home, homes, visible, request.caller_env,
      a.namespaces.mount ? PrivateAreas() : std::vector<std::filesystem::path>{}, mount_table);
  // A root holding a second mount of a home, or of a part of one it does not hold anyway (a
  // bind of /home, of ~/.config), would show - or let the command write - what the view and the
  // masks keep out (decision 0040): refused, as a root holding the home is.
  std::vector<std::filesystem::path> home_dirs = homes;
  home_dirs.insert(home_dirs.end(), home_view.own_areas.begin(), home_view.own_areas.end());
  if (const auto found = FindAliasInRoots(home_dirs, visible, mount_table)) {
    return Fail(
        ErrorCode::kInvalidArgument,
        fmt::format("the {} {} holds {}, where {} is mounted a second time: the command "
                    "could read{} it there, which the sandbox keeps out of reach (fix: "
                    "run cordon from a directory that does not hold that mount)",
                    found->root == request.workspace ? "workspace" : "writable root",
                    found->root.string(), found->alias.string(), found->dir.string(),
                    config.sandbox.mode == SandboxMode::kWorkspaceWrite ? " and write" : ""));
  }
  if (!home_view.areas.empty() && !a.namespaces.mount && !a.path_rules &&
      a.home == HomeView::kHidden) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot sandbox as configured (fail closed): sandbox.home \"hidden\" "
                            "needs a mount namespace, which the {} backend here does not have "
                            "(fix: enable unprivileged user namespaces, or set sandbox.home to "
                            "\"read_only\")",
                            a.enforcement.backend));
  }
  // Seatbelt's profile denies reads beneath every area by path, second mounts included. The
  // Landlock-only fallback leaves a second mount out of the read allow-list instead (below):
  // Landlock's rules belong to the files, so through the second mount the command reads what
  // the home shows at its own path (read-only there: the fallback has no hidden view) and no
  // more — its secrets stay unreadable.
  if (!home_view.areas.empty() && !a.namespaces.mount && masks && !a.path_rules) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot sandbox as configured (fail closed): {} shows a home a second "
                            "time (a bind mount), and the {} backend here has no mount namespace "
                            "to hide it there (fix: enable unprivileged user namespaces, or "
                            "unmount it)",
                            home_view.areas.front().string(), a.enforcement.backend));
  }
  std::vector<std::filesystem::path> home_holes = home_view.grants;
  home_holes.insert(home_holes.end(), visible.begin(), visible.end());
  CORDON_TRY_VOID(CheckRootsReachTheHost(roots, hidden));
  plan.namespaces = a.namespaces;
  // Projects nested below the roots (plan/nested_projects.h) are protected as the roots are.
  std::vector<std::filesystem::path> protected_roots =
      ProtectedRoots(config.sandbox, request.workspace, roots);
  CORDON_TRY(const std::vector<std::filesystem::path> nested,
             FindNestedProjects(config.sandbox, protected_roots,
                                request.caches != nullptr ? &request.caches->nested : nullptr));
  protected_roots.insert(protected_roots.end(), nested.begin(), nested.end());
  CORDON_TRY_VOID(CheckSearchable(protected_roots));
  // A missing .git (or only a placeholder another run holds) must not be created either; a
  // .git that is a link refuses the run (GitLinkProblem).
  std::vector<Placeholder> absent;
  if (config.sandbox.mode == SandboxMode::kWorkspaceWrite && config.sandbox.protect_git_metadata) {
    for (const std::filesystem::path& root : protected_roots) {
      struct stat st {};
      const std::filesystem::path git = root / ".git";
      const bool present = ::lstat(git.c_str(), &st) == 0;
      if (!present && errno != ENOENT) continue;  // not searchable: CheckSearchable decided
      if (!present || IsPlaceholder(git)) {
        absent.push_back({root, ".git", true});
      } else if (S_ISLNK(st.st_mode)) {
        return Fail(ErrorCode::kUnavailable, GitLinkProblem(git));
      } else if (S_ISREG(st.st_mode)) {
        if (std::string problem = GitDirProblem(root); !problem.empty()) {
          return Fail(ErrorCode::kUnavailable, std::move(problem));
        }
      }
      if (present) {
        if (std::string problem = WritableRootInGitProblem(root, roots); !problem.empty()) {
          return Fail(ErrorCode::kInvalidArgument, std::move(problem));
        }
      }
    }
  }
  // The host-run files of each protected root: the present ones bound read-only. An absent one,
  // like an absent .git, needs a mount point to be kept from being created: a placeholder the
  // run holds for the command alone and the backend covers (decision 0034); Seatbelt denies it
  // by name.
  CORDON_TRY(HostRunPaths host_run,
             FindHostRunPaths(config::HostRunFiles(config.sandbox), protected_roots));
  absent.insert(absent.end(), host_run.absent.begin(), host_run.absent.end());
  if (a.namespaces.mount) {
    plan.placeholders = std::move(absent);
    // bubblewrap mounts by path and would follow a placeholder link: it gets directories.
    if (a.enforcement.backend == BackendName(Backend::kBwrap)) {
      for (Placeholder& placeholder : plan.placeholders) placeholder.directory = true;
    }
  } else {
    for (const Placeholder& entry : absent) plan.absent_protected.push_back(entry.path());
  }
  if (a.path_rules) {
    for (const HiddenTarget& target : view.scan.absent) plan.absent_hidden.push_back(target.path);
  }
  // The fallback keeps no entry read-only itself: only a view that already does may run it
  // (cordon inside a sandbox that does; decision 0044), every entry checked, present or not.
  if (!a.missing_unless_view_holds.empty()) {
    std::vector<std::filesystem::path> entries = host_run.present;
    for (const Placeholder& entry : absent) entries.push_back(entry.path());
    if (config.sandbox.protect_git_metadata) {
      for (const std::filesystem::path& root : protected_roots) entries.push_back(root / ".git");
    }
    if (const auto open = FirstNotHeldByView(entries, writable, mount_table)) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("{} ({} is not kept read-only by this process's own view either, "
                              "as it would be inside a sandbox that protects it)",
                              JoinMissing(a.missing_unless_view_holds), open->string()));
    }
  }
  plan.landlock = BuildLandlock(config, a, features.landlock_abi, writable);
  if (masks) {
    plan.mounts = BuildMountOps(config.sandbox, request.workspace, roots, host_run.present, nested,
                                a.namespaces.mount);
    if (bind_cache) plan.mounts.push_back({MountOpKind::kBindWritable, tool_cache});
    auto append = [&](std::vector<MountOp> ops) {
      plan.mounts.insert(plan.mounts.end(), ops.begin(), ops.end());
    };
    // Host IPC first, then the credential masks after the writable binds (a secret inside a
    // writable root is hidden as well), then root-only files for a root caller.
    append(BuildRuntimeDirMasks(roots, config.sandbox.network));
    append(BuildHostSocketMasks(roots, request.workspace));
    append(BuildHiddenPathOps(hidden, roots, request.workspace));
    if (::geteuid() == 0) {
      append(request.caches != nullptr ? request.caches->root_only.Masks() : BuildRootOnlyMasks());
    }
    // The hidden home (decision 0038): an empty view over each home with the grants and the
    // roots bound into it.
    AddHomeView(home_view, home_holes, plan.mounts);
    // Network by domain: the sandbox's resolv.conf is cordon's, naming its resolver.
    if (config.sandbox.network == NetworkPolicy::kDomains) {
      if (std::optional<MountOp> resolver = ResolverConfigMount()) plan.mounts.push_back(*resolver);
    }
    // What each bind and mask is made from or over, as the sandbox's shape (plan/shape.h):
    // the workspace is the directory the session pinned, whatever is at its path now.
    for (MountOp& op : plan.mounts) {
      const bool bind =
          op.kind == MountOpKind::kBindWritable || op.kind == MountOpKind::kBindReadOnly;
      if (!bind) continue;
      if (op.path == request.workspace && request.workspace_id != FileId{}) {
        op.id = request.workspace_id;
      }
      const std::size_t pins =
          std::min(request.writable_root_ids.size(), config.sandbox.writable_roots.size());
      for (std::size_t i = 0; i < pins; ++i) {
        if (op.path == config.sandbox.writable_roots[i]) op.id = request.writable_root_ids[i];
      }
    }
    OrderPinsBeforeReadOnlyBinds(plan.mounts);
    IdentifyMounts(plan.mounts);
    // Under a hidden directory's mask nothing can be created anyway, and a placeholder there
    // could not be reached to cover it.
    std::erase_if(plan.placeholders, [&](const Placeholder& p) {
      return std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const MountOp& op) {
        return op.kind == MountOpKind::kMaskDirectory && core::IsWithin(p.path(), op.path);
      });
    });
    // Masks cover the secrets that exist now; Landlock's read allow-list also covers the ones
    // the host creates during the run (an absent path has no mount point to mask).
    if (plan.landlock.abi >= 1) {
      plan.landlock.handled_fs |= lsys::kAccessFsReadFile | lsys::kAccessFsReadDir;
      plan.landlock.readable = home_view.areas.empty()
                                   ? std::move(view.readable)
                                   : ReadableAroundHomeView(view, list, home_view, home_holes);
      plan.landlock.list_root = true;
    }
  } else {
    // The fallback: no masks. Hidden paths become holes in a read allow-list; one inside a
    // writable root cannot be carved out of the write rule that covers it.
    for (const HiddenTarget& target : hidden) {
      for (const auto& root : roots) {
        if (!core::IsWithin(target.path, root)) continue;
        const bool own = std::any_of(config.sandbox.own_config.begin(),
                                     config.sandbox.own_config.end(), [&](const auto& path) {
                                       auto canonical = core::Canonical(path);
                                       return canonical && *canonical == target.path;
                                     });
        return Fail(ErrorCode::kUnavailable,
                    fmt::format("cannot sandbox as configured (fail closed): {} {} lies inside "
                                "the writable root {}, and without a mount namespace it cannot "
                                "be hidden there (fix: enable user namespaces, or {})",
                                own ? "cordon's own config" : "the hidden path",
                                target.path.string(), root.string(),
                                own ? "keep the config outside the workspace"
                                    : "remove it from the writable root"));
      }
    }
    plan.landlock.handled_fs |= lsys::kAccessFsReadFile | lsys::kAccessFsReadDir;
    plan.landlock.readable = home_view.areas.empty()
                                 ? std::move(view.readable)
                                 : ReadableAroundHomeView(view, list, home_view, home_holes);
    plan.landlock.list_root = true;
  }
  plan.seccomp = SeccompSettings{
      .enabled = true,
      .sockets = a.sockets,
      // Without a listener of our own the outer sandbox's broker
      // answers connect() outside this run's Landlock domain.
      .refuse_unix_sockets =
          a.fallback && (features.landlock_abi < 9 || !features.seccomp_listener),
      .refuse_setid_modes = true,
      .broker_connect = features.seccomp_listener,
      .observe_writes = features.seccomp_listener && config.sandbox.explain_file_denials,
      .observe_datagrams = features.seccomp_listener && a.namespaces.net};
  plan.unix_connect_beneath = UnixConnectBeneath(config, a, roots);
  CORDON_TRY(plan.domains, PlanDomainRules(config.sandbox));
  CORDON_TRY(plan.parent_proxy, PlanParentProxy(config.sandbox, request.caller_env));
  const Scratch scratch = ScratchOf(plan.mounts);
  plan.home = scratch.home;
  plan.tmpdir = scratch.tmpdir;
  // What the command is told of the home: a caller's home that is the workspace or lies in a
  // root (read_only mode may run in the home itself) is shown whole, whatever the view.
  const bool home_in_root = std::any_of(
      homes.begin(), homes.end(),
      [&](const std::filesystem::path& home) { return core::IsWithinAny(home, visible); });
  const HomeView shown_home =
      a.home == HomeView::kHidden && home_in_root ? HomeView::kReadOnly : a.home;
  std::vector<std::string> defaults = ToolchainPointers(homes);
  if (!tool_cache.empty()) {
    for (std::string& variable : ToolCacheVariables(tool_cache)) {
      defaults.push_back(std::move(variable));
    }
  }
  plan.env =
      BuildEnvironment(request.caller_env, config.environment, plan.home, plan.tmpdir, defaults,
                       SandboxFacts(config.sandbox.mode, config.sandbox.network, shown_home));
  return plan;
}

Capabilities DescribeCapabilities(const Config& config,
                                  const linux_native::KernelFeatures& features,
                                  const BackendProbes& backends,
                                  const std::filesystem::path& workspace) {
  Assessment a = Assess(config, features, backends);
  if (!a.missing_unless_view_holds.empty()) {
    // The roots' own entries; a run checks the nested projects' too.
    // The writable roots, resolved once for the entries and for the check.
    const std::vector<std::filesystem::path> writable = workspace.empty()
                                                            ? std::vector<std::filesystem::path>{}
                                                            : RootsOf(config.sandbox, workspace);
    const std::vector<std::filesystem::path> entries =
        workspace.empty() ? std::vector<std::filesystem::path>{}
                          : RootEntries(config.sandbox, workspace, writable);
    if (workspace.empty() || FirstNotHeldByView(entries, writable, ReadMountTable())) {
      a.missing.insert(a.missing.end(), a.missing_unless_view_holds.begin(),
                       a.missing_unless_view_holds.end());
      a.filesystem_enforced = false;
      a.network_enforced = false;
      a.enforcement.filesystem = false;
      a.enforcement.network = false;
    } else {
      a.unsupported.push_back(
          "a mount namespace of cordon's own: protect_git_metadata and protect_host_run_files "
          "are held by this view's own read-only mounts of every entry (cordon inside a "
          "sandbox that keeps them; checked again at each run)");
    }
  }
  Capabilities caps;
  caps.mode = config.sandbox.mode;
  caps.network = config.sandbox.network;
  if (config.sandbox.network == NetworkPolicy::kDomains) {
    caps.allowed_domains = config.sandbox.allowed_domains;
    caps.denied_domains = config.sandbox.denied_domains;
  }
  caps.backend = a.enforcement.backend;
  if (config.sandbox.mode == SandboxMode::kOff) {
    caps.backend_reason = "mode off: commands run unsandboxed";
  } else if (a.enforcement.backend != "native") {
    caps.backend_reason = a.backend_reason;  // bwrap, or a backend refused on this platform
  } else if (a.namespaces.mount) {
    caps.backend_reason =
        features.landlock_abi >= 1
            ? fmt::format(
                  "native: user, mount and PID namespaces, Landlock ABI {} as a second "
                  "layer",
                  features.landlock_abi)
            : "native: user, mount and PID namespaces; Landlock is absent, so the mount view "
              "is the only layer confining writes (no second layer)";
  } else {
    caps.backend_reason =
        "native without namespaces (fallback): Landlock confines writes and reads of hidden "
        "paths, Landlock TCP rules and a seccomp socket-family filter deny the network; see "
        "unsupported for what is lost";
  }
  if (a.enforcement.backend == "native" && !a.backend_reason.empty()) {
    caps.backend_reason += "; " + a.backend_reason;
  }
  caps.enforcement = a.enforcement;
  caps.filesystem_enforced = a.filesystem_enforced;
  caps.network_enforced = a.network_enforced;
  caps.missing = a.missing;
  caps.unsupported = a.unsupported;
  caps.host_run_files = config::HostRunFiles(config.sandbox);
  caps.home = a.home;
  caps.tool_caches = config.sandbox.mode == SandboxMode::kWorkspaceWrite
                         ? config.sandbox.tool_caches
                         : ToolCaches::kOff;
  for (const std::filesystem::path& path : config.sandbox.readable_paths) {
    caps.readable_paths.push_back(path.string());
  }
  if (!ProjectMarkers(config.sandbox).empty()) {
    caps.nested_project_depth = config.sandbox.nested_project_depth;
  }
  caps.limits = limits::DescribeLimits(config.limits, features.limits, a.namespaces.user);
  if (config.sandbox.mode == SandboxMode::kOff) {
    // Applied, but the unconfined command may leave its cgroup (write its pid into another one
    // it can write) or, as root, raise its rlimits again.
    for (LimitEnforcement& l : caps.limits) {
      if (!l.mechanism.empty() && l.name != "timeout_seconds" && l.name != "output_bytes") {
        l.mechanism += " (advisory in mode off: the unconfined command can leave it)";
      }
    }
  }
  return caps;
}

}  // namespace cordon::plan
