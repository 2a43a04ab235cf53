// Host-local IPC and root-only files kept away from the sandboxed command by mask mounts.
//
// A pathname unix socket is reached by connect() through the file system: a network namespace
// does not cover it, a read-only mount does not stop it, and Landlock only can from ABI 9
// (LANDLOCK_ACCESS_FS_RESOLVE_UNIX). docker.sock and containerd are root on the host, the
// D-Bus buses and systemd's private socket start programs, agents in $XDG_RUNTIME_DIR sign
// with the user's keys. cordon counts host-local IPC as neither "the network" nor the
// workspace, so it is hidden in every sandboxed mode (docs/decisions/0004).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// Entries of the host's /run kept with network allow: name resolution (resolv.conf often
// links into /run/systemd/resolve, /run/resolvconf or /run/NetworkManager; systemd-resolved's
// varlink socket is DNS, which network allow grants) and NixOS's system profile.
inline constexpr std::string_view kRunKeptWithNetworkAllow[] = {
    "/run/systemd/resolve", "/run/resolvconf",    "/run/NetworkManager",
    "/run/current-system",  "/run/booted-system", "/run/opengl-driver"};

// Masks over the host's runtime directory (/run, which /var/run points to): with network deny
// all of it; with network allow every entry except kRunKeptWithNetworkAllow (and, inside
// /run/systemd, every entry except resolve). Nothing when a writable root lies inside /run.
std::vector<MountOp> BuildRuntimeDirMasks(const std::vector<std::filesystem::path>& roots,
                                          NetworkPolicy network);

// The paths of the pathname sockets listed in /proc/net/unix text (bound in this network
// namespace), without abstract ("@...") or unnamed ones.
std::vector<std::filesystem::path> ParseProcNetUnix(std::string_view text);

// Masks over each host socket listening now (ParseProcNetUnix of /proc/net/unix) that the
// sandbox would otherwise see: not inside a writable root, the private /tmp and /var/tmp, /dev
// or /run (BuildRuntimeDirMasks covers it). Optional masks: a socket that goes away in the
// meantime needs none. A socket bound after planning is not covered (Landlock ABI >= 9 is).
std::vector<MountOp> BuildHostSocketMasks(const std::vector<std::filesystem::path>& roots,
                                          const std::filesystem::path& workspace);

// For a caller with euid 0: the sandbox still runs as host uid 0 (without capabilities), and
// uid 0 is the owner of root-only files. Masks over every entry of /etc and of its direct
// subdirectories that others cannot read (/etc/shadow, /etc/gshadow, /etc/sudoers,
// /etc/ssh/ssh_host_*_key, /etc/ssl/private), sorted; symlinks are left alone. `etc`: for tests.
std::vector<MountOp> BuildRootOnlyMasks(const std::filesystem::path& etc = "/etc");

}  // namespace cordon::plan
