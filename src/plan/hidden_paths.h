// Credential locations hidden from the sandboxed command: they appear empty (a directory) or
// as an empty file, in every sandboxed mode and whatever the network setting. The built-in
// list covers the usual secret stores under the real home; users add paths in their config
// (sandbox.hidden_paths). Issue 4 owns the list and its documentation; the mechanism (mask
// mount operations) lives here and in src/linux/mount_view.cc.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// Relative to the caller's real home.
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

// Mask operations for the built-in list under `home` (skipped when empty) and the configured
// absolute paths. A path is checked with lstat: a directory becomes kMaskDirectory, anything
// else kMaskFile; a symlink is followed (realpath) and its target is masked; paths that do not
// exist are skipped (the read-only host view cannot gain them during the run).
std::vector<MountOp> BuildHiddenPathOps(const SandboxConfig& config,
                                        const std::filesystem::path& home);

// With network deny: masks over the host's runtime directory (/run, which /var/run points to on
// current distributions). It holds the host's pathname unix sockets — docker.sock and
// containerd (root on the host), the D-Bus buses, database sockets, and every user's
// $XDG_RUNTIME_DIR (/run/user/UID: ssh and gpg agents, rootless docker). A socket is network
// access in disguise, and neither the read-only host view nor Landlock (ABI <= 7) stops
// connect() on one. Skipped when a writable root lies inside /run (masking would hide it).
std::vector<MountOp> BuildRuntimeDirMasks(const std::vector<std::filesystem::path>& roots);

}  // namespace cordon::plan
