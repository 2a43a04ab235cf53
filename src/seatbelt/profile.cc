#include "seatbelt/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/paths.h"

namespace cordon::seatbelt {
namespace {

// The fixed part. Rules with a filter are last-match-wins, so the denials that carve
// exceptions out of the allowances (other terminals, git metadata, hidden credentials) come
// after them. Each rule says which tools need it and why it gives nothing beyond the command's
// own processes and files. NOT yet verified on a Mac (docs/backends.md).
constexpr const char* kPreamble = R"j((version 1)
(deny default)

; Processes: the command and its children, inside this sandbox only.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
; The host's CPU and memory counts (host_processor_info: Node's os.cpus(), which npm and
; build tools size their worker pools by, is empty without it). Read-only host statistics.
(allow mach-host*)
; POSIX semaphores (sem_open: Python's multiprocessing.Lock, many test runners). Only
; semaphores, which hold no data.
(allow ipc-posix-sem)

; Services ordinary tools need: user and group lookup and membership, notifications, logging,
; preferences (read only: cfprefsd serves reads of the plists file-read* shows anyway), the
; per-user temporary and cache directory names (confstr(_CS_DARWIN_USER_*_DIR), which the xcrun
; shims /usr/bin/git, clang, make, python3 ask for; writing there stays denied: the cache
; directory holds caches host tools trust, clang's module cache among them), and the process
; list ps reads (sysmond; macOS has no PID namespace, the host's processes are visible anyway).
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.cfprefsd.agent")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.bsd.dirhelper")
  (global-name "com.apple.sysmond"))
(allow user-preference-read)
(allow ipc-posix-shm-read-data
  (ipc-posix-name "apple.shm.notification_center")
  (ipc-posix-name-regex #"^apple[.]cfprefs[.]"))

; Reads: the host, like the Linux backends (credentials are denied at the end).
(allow file-read*)

; The null devices, the process's own descriptors (/dev/fd/N opens a copy of one it holds) and
; the DTrace helper (dyld registers a program's own probes there: node, python).
(allow file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/tty")
  (literal "/dev/dtracehelper")
  (regex #"^/dev/fd/[0-9]+$"))

; Terminals: the command never gets one (its stdio are pipes), so the host's terminals are
; neither readable nor writable (another terminal's keystrokes would be). Pseudo-terminals the
; command opens itself (script, expect, node-pty) are its own: /dev/ptmx, and the ttys the
; kernel marks with the pty extension for the process that made them.
(deny file-read* file-write* file-ioctl (regex #"^/dev/tty[a-z]*[0-9]+$"))
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* file-ioctl
  (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))
)j";

// Network allowed: the host's network, DNS (mDNSResponder's socket and the resolver
// configuration) and certificate trust (trustd: Go's crypto/x509, gh, terraform; the security
// server and OCSP for the system's TLS).
constexpr const char* kNetworkAllowed = R"j(
; Network: allowed (the host's network), with what name lookups and TLS verification need.
(allow network*)
(allow system-socket)
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.networkd")
  (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent")
  (global-name "com.apple.SecurityServer")
  (global-name "com.apple.ocspd"))
)j";

// Network denied: no IP at all (macOS has no private loopback, so a connection to 127.0.0.1
// would reach the host's services). Unix sockets: creating one needs system-socket; binding
// creates its file, which needs file-write-create, so only in writable places; connecting only
// to sockets inside the writable subtrees (the command's own).
constexpr const char* kNetworkDenied = R"j(
; Network: denied (no IP at all). Unix sockets: the command's own.
(allow system-socket (socket-domain AF_UNIX))
(allow network-bind network-inbound (local unix-socket))
)j";

class ProfileBuilder {
 public:
  // A parameter for `path`, named PREFIX_N; returns its SBPL reference.
  std::string Param(const char* prefix, std::size_t index, const std::filesystem::path& path) {
    std::string name = fmt::format("{}_{}", prefix, index);
    params_.emplace_back(name, path.string());
    return fmt::format("(param \"{}\")", name);
  }
  // The parent of `path` quoted and its last name's case-insensitive regex, as parameters
  // PREFIX_PARENT_N and PREFIX_NAME_N; returns the SBPL regex filter.
  std::string NameRegex(const char* prefix, std::size_t index, const std::filesystem::path& path) {
    const std::filesystem::path parent = path.parent_path();
    const std::string parent_name = fmt::format("{}_PARENT_{}", prefix, index);
    const std::string regex_name = fmt::format("{}_NAME_{}", prefix, index);
    // "/" as the parent: the regex adds the separator itself.
    params_.emplace_back(parent_name, parent == parent.root_path() ? "" : parent.string());
    params_.emplace_back(regex_name, CaseInsensitiveNameRegex(path.filename().string()));
    return fmt::format("(regex (string-append \"^\" (regex-quote (param \"{}\")) (param \"{}\")))",
                       parent_name, regex_name);
  }
  std::string& text() { return text_; }
  SeatbeltProfile Take() { return {std::move(text_), std::move(params_)}; }

 private:
  std::string text_ = kPreamble;
  std::vector<std::pair<std::string, std::string>> params_;
};

// One rule over a list of paths: (ACTION OPERATIONS (MATCHER (param ...)) ...).
void AddRule(ProfileBuilder& b, const char* comment, const char* action_operations,
             const char* matcher, const char* prefix,
             const std::vector<std::filesystem::path>& paths) {
  if (paths.empty()) return;
  b.text() += fmt::format("\n; {}\n({}", comment, action_operations);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    b.text() += fmt::format("\n  ({} {})", matcher, b.Param(prefix, i, paths[i]));
  }
  b.text() += ")\n";
}

// One denial over protected paths: each exactly, as a subtree, and by its name in any case.
void AddProtectRule(ProfileBuilder& b, const char* comment, const char* action_operations,
                    const char* prefix, const std::vector<std::filesystem::path>& paths) {
  if (paths.empty()) return;
  b.text() += fmt::format("\n; {}\n({}", comment, action_operations);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string param = b.Param(prefix, i, paths[i]);
    b.text() += fmt::format("\n  (literal {})\n  (subpath {})\n  {}", param, param,
                            b.NameRegex(prefix, i, paths[i]));
  }
  b.text() += ")\n";
}

void AddOnce(std::vector<std::filesystem::path>& list, const std::filesystem::path& path) {
  if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(path);
}

bool InAny(const std::filesystem::path& path, const std::vector<std::filesystem::path>& roots) {
  for (const auto& root : roots) {
    if (core::IsWithin(path, root)) return true;
  }
  return false;
}

// Every writable root, and each ancestor of a protected or hidden path inside a writable
// subtree: not renamed or removed.
std::vector<std::filesystem::path> Pins(const SeatbeltPolicy& policy) {
  std::vector<std::filesystem::path> pinned = policy.pinned;
  for (const std::filesystem::path& root : policy.writable) AddOnce(pinned, root);
  for (const auto* list :
       {&policy.read_only, &policy.hidden_dirs, &policy.hidden_files, &policy.hidden_absent}) {
    for (const std::filesystem::path& path : *list) {
      for (std::filesystem::path up = path.parent_path(); up != up.parent_path();
           up = up.parent_path()) {
        if (InAny(up, policy.writable)) AddOnce(pinned, up);
      }
    }
  }
  return pinned;
}

// Each hidden home and the directories between it and each grant inside it.
std::vector<std::filesystem::path> GrantPaths(const SeatbeltPolicy& policy) {
  std::vector<std::filesystem::path> paths;
  for (const std::filesystem::path& home : policy.hidden_homes) {
    AddOnce(paths, home);
    for (const std::filesystem::path& grant : policy.home_grants) {
      if (!core::IsWithin(grant, home) || grant == home) continue;
      for (std::filesystem::path up = grant.parent_path(); up != home && core::IsWithin(up, home);
           up = up.parent_path()) {
        AddOnce(paths, up);
      }
    }
  }
  return paths;
}

}  // namespace

SeatbeltPolicy SeatbeltPolicyFromPlan(const plan::LaunchPlan& plan,
                                      const std::filesystem::path& private_dir,
                                      bool network_allowed) {
  SeatbeltPolicy policy;
  policy.network_allowed = network_allowed;
  for (const plan::MountOp& op : plan.mounts) {
    if (op.kind != plan::MountOpKind::kBindWritable) continue;
    (op.optional ? policy.pinned : policy.writable).push_back(op.path);  // optional: a pin
  }
  if (!private_dir.empty()) policy.writable.push_back(private_dir);
  for (const plan::MountOp& op : plan.mounts) {
    switch (op.kind) {
      case plan::MountOpKind::kBindReadOnly:
        // Outside every writable subtree it is read-only anyway.
        if (InAny(op.path, policy.writable)) policy.read_only.push_back(op.path);
        break;
      case plan::MountOpKind::kMaskDirectory:
        policy.hidden_dirs.push_back(op.path);
        break;
      case plan::MountOpKind::kMaskFile:
        policy.hidden_files.push_back(op.path);
        break;
      case plan::MountOpKind::kHomeView:
        policy.hidden_homes.push_back(op.path);
        break;
      case plan::MountOpKind::kBindWritable:
      case plan::MountOpKind::kTmpfs:  // Linux-only: the private dir replaces these
      case plan::MountOpKind::kDirectory:
      case plan::MountOpKind::kResolverConfig:
        break;
    }
  }
  // What the plan binds into a hidden home is what the command may read there.
  for (const plan::MountOp& op : plan.mounts) {
    const bool bind = op.kind == plan::MountOpKind::kBindReadOnly ||
                      (op.kind == plan::MountOpKind::kBindWritable && !op.optional);
    if (bind && InAny(op.path, policy.hidden_homes)) AddOnce(policy.home_grants, op.path);
  }
  // A missing .git or host-run file in a writable root: denied by name, so it cannot be
  // created (Linux holds a placeholder instead).
  for (const std::filesystem::path& git : plan.absent_protected) {
    if (InAny(git, policy.writable)) policy.read_only.push_back(git);
  }
  policy.hidden_absent = plan.absent_hidden;
  return policy;
}

std::string CaseInsensitiveNameRegex(const std::string& name) {
  std::string out = "/";
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalpha(u) != 0 && u < 0x80) {
      out += fmt::format("[{}{}]", static_cast<char>(std::tolower(u)),
                         static_cast<char>(std::toupper(u)));
    } else if (std::isdigit(u) != 0 || c == '_' || c == '-' || u >= 0x80) {
      out += c;  // not special in a regex; bytes of other scripts kept as they are
    } else if (c == ']' || c == '[' || c == '\\' || c == '^') {
      out += '.';  // no class holds it plainly: any one character (the denial matches more)
    } else {
      out += fmt::format("[{}]", c);
    }
  }
  out += "(/|$)";
  return out;
}

SeatbeltProfile RenderSeatbelt(const SeatbeltPolicy& policy) {
  ProfileBuilder b;
  AddRule(b,
          "The real homes: neither readable nor listable (what the host creates there later\n"
          "; neither), except the grants below.",
          "deny file-read*", "subpath", "HOME", policy.hidden_homes);
  AddRule(b,
          "Granted in a home: the tool paths, sandbox.readable_paths, the workspace and the\n"
          "; writable roots there (a secret inside one stays denied at the end).",
          "allow file-read*", "subpath", "GRANT", policy.home_grants);
  AddRule(b, "The directories from a home to each grant: stat (realpath, getcwd), not listing.",
          "allow file-read-metadata", "literal", "GRANT_PATH", GrantPaths(policy));
  AddRule(b, "Writes: the workspace, the writable roots and the private HOME/TMPDIR.",
          "allow file-write*", "subpath", "WRITABLE", policy.writable);
  if (policy.network_allowed) {
    b.text() += kNetworkAllowed;
  } else {
    b.text() += kNetworkDenied;
    // Never without a filter: an unfiltered allow would let every connection out.
    if (!policy.writable.empty()) {
      b.text() +=
          "\n; Connections only to sockets inside the writable subtrees.\n(allow network-outbound";
    }
    for (std::size_t i = 0; i < policy.writable.size(); ++i) {
      b.text() += fmt::format("\n  (remote unix-socket (subpath {}))",
                              b.Param("SOCKET", i, policy.writable[i]));
    }
    if (!policy.writable.empty()) b.text() += ")\n";
  }
  AddProtectRule(b,
                 "Git metadata and host-run files: read-only in writable subtrees; an absent one\n"
                 "; is not created in any case of its name; no hard link to one (a write\n"
                 "; through the link would change it).",
                 "deny file-write* file-link", "READ_ONLY", policy.read_only);
  AddRule(b,
          "Writable roots and ancestors of protected paths: not renamed or removed (their\n"
          "; contents stay writable), so nothing protected moves out from under its rule.",
          "deny file-write-unlink file-write-create", "literal", "PINNED", Pins(policy));
  std::vector<std::filesystem::path> hidden = policy.hidden_dirs;
  hidden.insert(hidden.end(), policy.hidden_files.begin(), policy.hidden_files.end());
  hidden.insert(hidden.end(), policy.hidden_absent.begin(), policy.hidden_absent.end());
  AddProtectRule(
      b,
      "Hidden credentials, present or not (one created during the run too): unreadable,\n"
      "; unwritable, never linked elsewhere.",
      "deny file-read* file-write* file-link", "HIDDEN", hidden);
  return b.Take();
}

std::vector<SeatbeltPolicy> ProbeVariants(const std::filesystem::path& scratch) {
  SeatbeltPolicy policy;
  policy.writable = {scratch / "allowed"};
  policy.read_only = {scratch / "allowed" / ".git"};
  policy.hidden_dirs = {scratch / "hidden-dir"};
  policy.hidden_files = {scratch / "hidden-file"};
  policy.hidden_absent = {scratch / "hidden-absent"};
  policy.hidden_homes = {scratch / "home"};
  policy.home_grants = {scratch / "home" / "tools" / "bin"};
  SeatbeltPolicy with_network = policy;
  with_network.network_allowed = true;
  return {policy, with_network};
}

std::vector<std::string> SandboxExecArgv(const SeatbeltProfile& profile,
                                         const std::vector<std::string>& argv) {
  std::vector<std::string> out{kSandboxExec, "-p", profile.text};
  for (const auto& [name, value] : profile.params) {
    out.emplace_back("-D");
    out.push_back(name + "=" + value);
  }
  out.emplace_back("--");  // a command whose name starts with '-' is not an option
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

}  // namespace cordon::seatbelt
