// LaunchPlan: everything a backend needs to start one command, computed purely (no system
// calls beyond realpath/stat of configured paths) from the pinned Config, the kernel probe and
// the request. Backends only replay a plan; they make no policy decisions of their own.
//
// Contract shared by src/plan (owner), src/linux (native backend), src/exec and src/session.
// Fields may be added by src/plan; the ones below are relied on by src/exec and src/session.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cordon/capabilities.h"
#include "cordon/config.h"
#include "cordon/error.h"
#include "cordon/run.h"
#include "limits/limits_plan.h"
#include "linux/kernel_features.h"
#include "net/domain_rules.h"
#include "net/parent_proxy.h"
#include "plan/backend_probe.h"

namespace cordon::plan {

struct PlanCaches;  // plan/plan_caches.h

// A file as the kernel knows it: device, inode and, for a mask's target, its birth time (statx).
// A mount made over one file is not a mount over the file found at the same path after the host
// renamed another one over it: the kernel then detaches the mount in every namespace. The birth
// time tells a new file from an old one that had the same inode number (freed and reused at
// once); where the file system keeps none, the change time stands in. All zero: not known (an
// optional target that was missing when planned). plan/mount_identity.h says why bind sources
// have no time.
struct FileId {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::int64_t time_sec = 0;
  std::uint32_t time_nsec = 0;
  bool operator==(const FileId&) const = default;
};

struct PlanRequest {
  std::vector<std::string> argv;    // already resolved: shell text becomes sh -c TEXT
  std::filesystem::path workspace;  // canonical launch directory (the writable root)
  // The directory `workspace` named when the session started ({}: not pinned). A plan for
  // another directory at that path is refused, and the workspace's bind is made only from
  // this one (the child checks it: linux/mount_view.cc).
  FileId workspace_id;
  // Parallel to config.sandbox.writable_roots, which the session made canonical: the
  // directories they named then. Non-empty: each root is taken as named (never resolved
  // again), one that is another directory now is refused, and its bind is made only from this
  // one.
  std::vector<FileId> writable_root_ids;
  std::filesystem::path cwd;            // canonical, inside the workspace
  std::vector<std::string> caller_env;  // "NAME=value" of the caller (environ)
  std::filesystem::path caller_home;    // the real HOME, for hidden credential paths
  // The tools' cache directory the session made for this run (session/tool_cache_dir.h;
  // canonical), or empty: none. Bound writable and named in the tools' variables (decision 0041).
  std::filesystem::path tool_cache;
  // The session's watched host scans (plan/plan_caches.h), or null: scan now. Not part of the
  // plan: what they answer is what a scan now would find.
  PlanCaches* caches = nullptr;
};

// Namespaces the native backend creates for the sandbox (all false: none, Landlock-only).
struct Namespaces {
  bool user = false;
  bool mount = false;
  bool pid = false;
  bool net = false;  // only when network is denied: the sandbox gets its own loopback
  bool ipc = false;
  bool uts = false;
  bool operator==(const Namespaces&) const = default;
};

// One step of the mount view, replayed in order by the backend on top of the read-only copy of
// the host tree (see docs/sandbox-linux.md). Paths are canonical host paths; the sandbox sees
// each at the same path.
enum class MountOpKind {
  kBindWritable,    // bind the host's `path` read-write (a writable root, the workspace)
  kBindReadOnly,    // bind the host's `path` read-only (.git inside a writable root; the
                    // workspace in read_only mode, which may lie below the private /tmp)
  kTmpfs,           // a private, empty, writable tmpfs at `path` (/tmp, /var/tmp)
  kDirectory,       // create directory `path` (0700) inside an earlier tmpfs (the private HOME)
  kMaskDirectory,   // an empty read-only tmpfs over directory `path` (hidden path)
  kMaskFile,        // /dev/null bound read-only over file `path` (hidden path)
  kHomeView,        // an empty tmpfs over directory `path` (a hidden home, plan/home_view.h), made
                    // before the binds into it and read-only once they are made
  kResolverConfig,  // cordon's resolver configuration bound read-only over the file `path`
                    // (the host's resolv.conf): network by domain (LaunchPlan::domains)
};

struct MountOp {
  MountOpKind kind = MountOpKind::kTmpfs;
  std::filesystem::path path;
  // Masks and pins are resolved in the child without following any symlink, and a mask whose
  // target changed type (a directory became a file or a symlink) fails the run. A required
  // target that vanished since planning fails the run too; an optional one (an entry of the
  // host's /run, a host socket, an ancestor pin) is skipped: its absence hides nothing.
  bool optional = false;
  // Binds and masks: the source or target as planned (plan/mount_identity.h). Part of the
  // sandbox's shape (plan/shape.h): a view prepared over another file is never reused.
  FileId id;
  // A read-only bind of git's metadata (protect_git_metadata: a .git, what a `gitdir:` file
  // names): the rule a denial there names (plan/file_denials.h).
  bool git_metadata = false;
  bool operator==(const MountOp&) const = default;
};

// Landlock ruleset, already clamped to the probed ABI. abi == 0: not applied.
struct LandlockRules {
  int abi = 0;
  std::uint64_t handled_fs = 0;                 // write-ish rights: denied unless ruled
  std::vector<std::filesystem::path> writable;  // every handled right beneath each path
  // Read allow-list (the fallback without a mount namespace, which cannot mask hidden paths):
  // when handled_fs includes the read rights, reads are allowed beneath each of these paths
  // (opened without following a symlink) and nowhere else except the writable paths.
  std::vector<std::filesystem::path> readable;
  bool list_root = false;         // READ_DIR beneath "/" (names stay listable, contents do not)
  std::uint64_t handled_net = 0;  // TCP bind/connect: denied (no port rules)
  std::uint64_t scoped = 0;       // signal / abstract-unix-socket scoping
  bool operator==(const LandlockRules&) const = default;
};

enum class SocketPolicy {
  kAny,             // network allowed: no family filter
  kLocalFamilies,   // AF_UNIX, AF_INET, AF_INET6, AF_NETLINK (inet reaches only a private netns)
  kUnixAndNetlink,  // no net namespace: AF_INET and AF_INET6 refused as well
};

struct SeccompSettings {
  bool enabled = false;
  SocketPolicy sockets = SocketPolicy::kAny;
  // socket(AF_UNIX) and datagram socketpair(AF_UNIX) refused (stream and seqpacket pairs
  // stay): without a mount namespace and without Landlock ABI >= 9 nothing else keeps the
  // host's pathname sockets (docker.sock, D-Bus, journald) unreachable.
  bool refuse_unix_sockets = false;
  // chmod/fchmod/fchmodat/fchmodat2 and file creation with S_ISUID or S_ISGID refused: a
  // set-id file planted in a writable root would run with the caller's ids on the host later.
  bool refuse_setid_modes = true;
  // connect() goes to the supervisor (SCMP_ACT_NOTIFY), which performs it on the command's
  // socket and lets a pathname unix socket be reached only beneath
  // LaunchPlan::unix_connect_beneath: host sockets bound during the run stay out of reach on
  // every kernel (docs/decisions/0019). A raw inet socket() goes there too, to be reported
  // (it fails for want of CAP_NET_RAW) and let go on.
  bool broker_connect = false;
  // With broker_connect: the write-intent calls (open for writing, mkdir, unlink, rename, ...)
  // go to the supervisor too, which reports the ones the sandbox refuses and lets every one
  // continue unchanged (exec/write_observer.h; sandbox.explain_file_denials).
  bool observe_writes = false;
  // With broker_connect: sendto() with an address (UDP without a connect) goes to the
  // supervisor, which reports one the sandbox's own network namespace refuses and lets it
  // continue unchanged. Only with that namespace (network deny).
  bool observe_datagrams = false;
  bool operator==(const SeccompSettings&) const = default;
};

// A protected entry that does not exist when the command starts (a `.git`, a host-run file;
// docs/decisions/0034): the supervisor makes a placeholder for it on the host for this command
// alone (plan/host_placeholders.h) and the backend covers that placeholder inside the
// sandbox (linux/placeholder_cover.h), so the command cannot create the entry.
// What a placeholder link points to: inside /proc, where no one can create an entry, so the
// link dangles for every process on the host, root included, and reads as absent to every tool
// that follows links.
inline constexpr const char* kPlaceholderLinkTarget = "/proc/cordon-absent-during-sandboxed-run";
// A placeholder directory has the sticky bit (01755): how a run tells an empty one it may
// adopt (another run's, or one a killed run left) from an empty directory of the user's.
inline constexpr unsigned kPlaceholderDirectoryMode = 01755;

struct Placeholder {
  std::filesystem::path root;  // the protected root (canonical)
  std::string relative;        // the entry below it, without a trailing "/"
  // An empty directory; otherwise a dangling link to kPlaceholderLinkTarget.
  bool directory = false;
  std::filesystem::path path() const { return root / relative; }
  bool operator==(const Placeholder&) const = default;
};

// Every field below is either part of the shape that decides whether a prepared sandbox may be
// reused, or marked per command, in plan/shape.cc (ShapeOf): a new field does not build until
// it is classified there.
struct LaunchPlan {
  bool sandboxed = true;  // false only in mode off
  std::vector<std::string> argv;
  std::vector<std::string> env;  // the complete, minimal environment ("NAME=value")
  std::filesystem::path cwd;
  std::filesystem::path workspace;
  Enforcement enforcement;  // what this plan enforces, layer by layer

  // Native backend detail (unused when !sandboxed).
  Namespaces namespaces;
  std::vector<MountOp> mounts;  // replayed in order; empty without a mount namespace
  // Without a mount namespace (Seatbelt): the protected paths that do not exist — "<root>/.git"
  // of each writable root that has none, the absent host-run files. They must not be created;
  // Seatbelt denies creating them by name. With a mount namespace they are `placeholders`.
  std::vector<std::filesystem::path> absent_protected;
  // Without a mount namespace, where the backend's path rules can deny them (Seatbelt): the
  // hidden paths that do not exist now, denied by name, so a secret created during the run is
  // unreadable too. Elsewhere empty: Landlock's read allow-list leaves them out instead.
  std::vector<std::filesystem::path> absent_hidden;
  // With a mount namespace: the absent `.git` of each writable root and its absent host-run
  // files, each held by a placeholder for the command's lifetime and covered per command (never
  // part of a prepared view: nothing of it is on the host between commands).
  std::vector<Placeholder> placeholders;
  LandlockRules landlock;
  SeccompSettings seccomp;
  // Where connect() may reach a pathname unix socket (seccomp.broker_connect), as the command
  // sees these paths: the writable roots and the private /tmp and /var/tmp (HOME is inside
  // /tmp); the fallback's private directory is added by the backend.
  std::vector<std::filesystem::path> unix_connect_beneath;
  std::filesystem::path home;       // the private HOME inside the sandbox
  std::filesystem::path tmpdir;     // the private TMPDIR inside the sandbox
  std::string hostname = "cordon";  // set in the UTS namespace
  // Network by domain (sandbox.network "domains", docs/network-domains.md): the sandbox's own
  // network namespace as with deny; its resolv.conf (a kResolverConfig mount) names 127.0.0.1,
  // where the command's process binds a UDP socket it hands to the supervisor, which answers
  // for allowed names; TCP to the addresses it handed out is connected outside by the connect
  // broker. Unset: another network mode.
  std::optional<net::DomainRules> domains;
  // With `domains`: the HTTP proxy the broker tunnels its connections through
  // (sandbox.parent_proxy, decision 0053); nullopt: it connects directly.
  std::optional<net::ParentProxy> parent_proxy;

  // Resource limits (every mode, `off` included): rlimits the command process applies to
  // itself, and the per-run cgroup the caller creates when `limits.needs_cgroup()`.
  limits::LimitsPlan limits;
};

// Fails closed (kUnavailable) when the config asks for a guarantee that `features` cannot give,
// with a message naming what is missing and how to fix it.
// `backends`: the session's probe of the other backends (plan/backend_probe.h).
[[nodiscard]] Result<LaunchPlan> Plan(const Config& config,
                                      const linux_native::KernelFeatures& features,
                                      const PlanRequest& request,
                                      const BackendProbes& backends = {});

// The capabilities payload for `config` on a machine with `features` (cordon status, MCP
// initialize). Consistent with Plan: `missing` is non-empty exactly when Plan would refuse.
// `workspace`: where the fallback's protected entries are looked for in this view
// (plan/view_protection.h); without one they count as missing.
Capabilities DescribeCapabilities(const Config& config,
                                  const linux_native::KernelFeatures& features,
                                  const BackendProbes& backends = {},
                                  const std::filesystem::path& workspace = {});

}  // namespace cordon::plan
