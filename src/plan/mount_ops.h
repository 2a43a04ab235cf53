// The mount view as data: which paths become writable, private or read-only again, in the order
// the backend replays them. Pure apart from realpath/lstat of the configured paths.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/error.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// The private HOME, created inside the private /tmp (so it is gone with it).
inline constexpr const char* kPrivateHome = "/tmp/.cordon-home";
inline constexpr const char* kPrivateTmp = "/tmp";
// With /tmp an empty read-only view (a root lies beneath it, PrivateAreaOps): the command's
// scratch, a private tmpfs inside the view, and the private HOME inside that.
inline constexpr const char* kViewScratch = "/tmp/.cordon-tmp";
inline constexpr const char* kViewScratchHome = "/tmp/.cordon-tmp/.cordon-home";

// Where the command's own scratch space is: its TMPDIR and its HOME.
struct Scratch {
  std::filesystem::path tmpdir;
  std::filesystem::path home;
};

// The private areas, first of the mount view: /tmp (with the private HOME in it) and /var/tmp,
// each a fresh tmpfs. With `views` (the sandbox has a mount namespace), an area that holds one
// of `held` (the writable roots, the bound workspace) strictly beneath it is instead an empty
// view (MountOpKind::kHomeView) made read-only once they are bound into it: a file the command
// moves or writes beside its root fails there instead of vanishing with the run (decision
// 0046). With /tmp such a view, the scratch is kViewScratch inside it.
std::vector<MountOp> PrivateAreaOps(const std::vector<std::filesystem::path>& held, bool views);

// The scratch space of a mount view PrivateAreaOps began.
Scratch ScratchOf(const std::vector<MountOp>& mounts);

// The canonical writable roots of `config` for `workspace` (empty in read_only mode): the
// workspace first, then the configured roots; roots inside another root are dropped (the outer
// bind already covers them). Fails (kNotFound) when a configured root no longer exists.
// `pinned`: the configured roots are canonical already (a session made them so and pinned
// them, PlanRequest::writable_root_ids) and are taken as named, never resolved again: a name
// a command swapped for a link must not become a bind of the link's target.
[[nodiscard]] Result<std::vector<std::filesystem::path>> WritableRoots(
    const SandboxConfig& config, const std::filesystem::path& workspace, bool pinned = false);

// The git metadata of `root` that protect_git_metadata keeps read-only: <root>/.git when it
// is a directory; when it is a file (worktree, submodule), the file itself, the git directory
// it points to ("gitdir: ...") and that directory's common dir (a worktree's main .git), each
// when it holds a HEAD (git uses no other).
// Empty when there is no .git. Pure apart from lstat/realpath/reading the .git file.
std::vector<std::filesystem::path> GitMetadataPaths(const std::filesystem::path& root);

// A writable root inside what GitMetadataPaths(root) names: the read-only bind of that path
// would cover it (a gitdir outside every writable root gets none, and stayed writable). Empty
// when there is none.
std::string WritableRootInGitProblem(const std::filesystem::path& root,
                                     const std::vector<std::filesystem::path>& writable_roots);

// Why the git metadata of `root` cannot be protected, empty when it can: a .git file names a
// git directory (or common dir) that contains `root` itself — a hostile command's way to make
// the workspace read-only for every later command, or to leave hooks writable.
std::string GitDirProblem(const std::filesystem::path& root);

// Why a .git that is a symbolic link cannot be protected, and the ways out: host git follows
// the link, a read-only bind would keep only where it points today, and the command could
// replace the link itself (in a writable directory) with one to a directory of its own.
std::string GitLinkProblem(const std::filesystem::path& git);

// The roots whose .git and host-run files are protected: the writable roots, plus (in
// workspace_write mode) the workspace and each configured root that WritableRoots dropped as
// nested in another one.
std::vector<std::filesystem::path> ProtectedRoots(
    const SandboxConfig& config, const std::filesystem::path& workspace,
    const std::vector<std::filesystem::path>& writable_roots);

// Mount operations in replay order:
//   the private areas (PrivateAreaOps of the writable roots and, in read_only mode, the
//   workspace, with `views`); writable binds (or, in
//   read_only mode, a read-only bind of the workspace: it may lie below the private /tmp);
//   the pins (ProtectionPins) of `nested_projects` and the read-only paths' parents; read-only
//   binds of the GitMetadataPaths of each protected root and nested project and of `host_run_files`
//   (the present ones, plan/host_run_paths.h) that lie inside a writable root (others are read-only
//   already), on top of the writable binds and pins.
std::vector<MountOp> BuildMountOps(const SandboxConfig& config,
                                   const std::filesystem::path& workspace,
                                   const std::vector<std::filesystem::path>& writable_roots,
                                   const std::vector<std::filesystem::path>& host_run_files = {},
                                   const std::vector<std::filesystem::path>& nested_projects = {},
                                   bool views = false);

// The directories pinned: each of `directories` (nested projects) and
// each directory above it, and each directory above each of `protected_paths`, up to (not
// including) the writable root it lies in; outermost first, each once.
std::vector<std::filesystem::path> ProtectionPins(
    const std::vector<std::filesystem::path>& writable_roots,
    const std::vector<std::filesystem::path>& directories,
    const std::vector<std::filesystem::path>& protected_paths);

// Moves every pin (an optional writable bind: a nested project's, a hidden path's ancestor)
// after the writable roots and before the first read-only bind, keeping the order within each
// kind. bubblewrap binds a pin from the host, where a read-only bind made inside the sandbox
// is not: a pin after a read-only bind of .git below it would make .git writable again.
// A hidden home's view and its grants (a read-only bind inside a kHomeView area and outside
// every writable bind) come first of all: the roots and pins inside them land on top.
void OrderPinsBeforeReadOnlyBinds(std::vector<MountOp>& ops);

}  // namespace cordon::plan
