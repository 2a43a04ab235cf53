// Credential locations hidden from the sandboxed command: they appear empty (a directory) or
// as an empty file, in every sandboxed mode and whatever the network setting. The built-in
// list covers the usual secret stores under the real home; users add paths in their config
// (sandbox.hidden_paths). The mechanism is a mask mount (src/linux/mount_view.cc) or, without a
// mount namespace, a Landlock read allow-list that leaves the hidden paths out
// (docs/decisions/0004-hidden-paths-and-host-sockets.md).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// Relative to each of the caller's homes.
inline constexpr std::string_view kBuiltinHiddenPaths[] = {".ssh",
                                                           ".gnupg",
                                                           ".aws",
                                                           ".azure",
                                                           ".config/gcloud",
                                                           ".kube",
                                                           ".docker/config.json",
                                                           ".netrc",
                                                           ".git-credentials",
                                                           ".npmrc",
                                                           ".pypirc",
                                                           ".cargo/credentials",
                                                           ".cargo/credentials.toml",
                                                           ".config/gh",
                                                           ".config/cordon",
                                                           ".config/github-copilot",
                                                           ".claude/.credentials.json",
                                                           ".codex/auth.json",
                                                           ".gemini/oauth_creds.json"};

// The caller's homes: `home` ($HOME) and, when it differs, the home of the effective user in
// the password database (a caller may run with HOME pointing elsewhere; the secrets stay in
// the passwd home). Canonical; missing ones are left out.
std::vector<std::filesystem::path> CallerHomes(const std::filesystem::path& home);

// One existing hidden path: canonical (a symlinked secret is hidden at its target) and typed.
struct HiddenTarget {
  std::filesystem::path path;
  bool directory = false;
  FileId id;  // of a present target: its mask is planned over this very file
};

// What a scan looked at, for a cache that must notice when any of it changes
// (plan/hidden_watch.h): every directory in which it looked a name up or which it listed.
// `exact` is false when a symlink, "." or ".." sent a candidate through realpath, which looks
// into directories not recorded here.
struct ScannedDirs {
  std::vector<std::filesystem::path> dirs;
  bool exact = true;
};

// Both lists below from one pass over the candidates (what the planner uses).
struct HiddenScan {
  std::vector<HiddenTarget> present;  // FindHiddenTargets
  std::vector<HiddenTarget> absent;   // FindAbsentHiddenPaths
};
HiddenScan ScanHiddenPaths(const SandboxConfig& config,
                           const std::vector<std::filesystem::path>& homes,
                           ScannedDirs* seen = nullptr);

// The built-in list under each home and the configured absolute paths that exist now.
std::vector<HiddenTarget> FindHiddenTargets(const SandboxConfig& config,
                                            const std::vector<std::filesystem::path>& homes);

// The built-in list under each home and the configured absolute paths that do NOT exist now,
// each under its canonical parent when that exists (lexically otherwise). They cannot be masked
// (a mount needs a mount point, and cordon does not create files in the home), so where
// Landlock exists the planner leaves them out of a read allow-list instead: a secret the host
// creates there during the run stays unreadable (e.g. `aws configure` while a command runs).
std::vector<HiddenTarget> FindAbsentHiddenPaths(const SandboxConfig& config,
                                                const std::vector<std::filesystem::path>& homes);

// Mask operations for `targets` that the sandbox's view contains (a path below the private
// /tmp or /var/tmp is only there when a writable root holds it). Each mask is required: a
// target that vanishes or changes type before the mount fails the run. A target inside a
// writable root gets its ancestors below that root pinned first (bound onto themselves): a
// mount point cannot be renamed, so the command cannot move a secret out from under its mask
// for a later run.
std::vector<MountOp> BuildHiddenPathOps(const std::vector<HiddenTarget>& targets,
                                        const std::vector<std::filesystem::path>& writable_roots,
                                        const std::filesystem::path& workspace);

// For the fallback without a mount namespace: paths beneath which reads are allowed so that
// everything is readable except `targets`. For each ancestor directory of a target, every
// entry that is neither a target nor another such ancestor (symlinks are left out: a read
// through one is checked at its target). An entry that vanishes before the rules are added is
// skipped there (linux/landlock_ruleset.cc). `base`: the same beneath a directory other than
// "/" (a grant of the hidden home): only the targets inside it count, and without any it is
// readable whole.
std::vector<std::filesystem::path> ReadAllowList(const std::vector<HiddenTarget>& targets,
                                                 ScannedDirs* seen = nullptr,
                                                 const std::filesystem::path& base = "/");

}  // namespace cordon::plan
