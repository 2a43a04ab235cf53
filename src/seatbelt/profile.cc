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
; ...except other processes' arguments and environment (API keys in an environment, passwords
; on a command line): the host's processes are visible on macOS, their secrets are not.
(deny sysctl-read (sysctl-name-prefix "kern.procargs"))
; The host's CPU and memory counts (host_processor_info: Node's os.cpus(), which npm and
; build tools size their worker pools by, is empty without it). Read-only host statistics.
(allow mach-host*)
; POSIX semaphores (sem_open: Python's multiprocessing.Lock, many test runners). Only
; semaphores, which hold no data.
(allow ipc-posix-sem)

; Services ordinary tools need: user and group lookup and membership, notifications, logging,
; preferences (read, the global domain only: cfprefsd would serve every domain's plist from
; ~/Library/Preferences, which the hidden home keeps out), and the
; per-user temporary and cache directory names (confstr(_CS_DARWIN_USER_*_DIR), which the xcrun
; shims /usr/bin/git, clang, make, python3 ask for; writing there stays denied: the cache
; directory holds caches host tools trust, clang's module cache among them). Not sysmond: it
; would hand ps every host process's command line.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd")
  (global-name "com.apple.cfprefsd.agent")
  (global-name "com.apple.cfprefsd.daemon")
  (global-name "com.apple.bsd.dirhelper"))
(allow user-preference-read (preference-domain "kCFPreferencesAnyApplication"))
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
  (literal "/dev/dtracehelper")
  (regex #"^/dev/fd/[0-9]+$"))

; Terminals: the command never gets one (its stdio are pipes), so the host's terminals, serial
; lines and console are neither readable nor writable (another terminal's keystrokes would be).
; /dev/tty is the process's own controlling terminal (none: it runs in a new session, until it
; makes a pseudo-terminal its own). Pseudo-terminals the command opens itself (script, expect,
; node-pty) are its own: /dev/ptmx, and the ttys the kernel marks with the pty extension for
; the process that made them.
(deny file-read* file-write* file-ioctl (regex #"^/dev/(tty|cu)") (literal "/dev/console"))
(allow file-read* file-write-data file-ioctl (literal "/dev/tty"))
(allow pseudo-tty)
(allow file-read* file-write* file-ioctl (literal "/dev/ptmx"))
(allow file-read* file-write* file-ioctl
  (require-all (regex #"^/dev/ttys[0-9]+$") (extension "com.apple.sandbox.pty")))
)j";

// Network allowed: the host's network, DNS (mDNSResponder's socket and the resolver
// configuration) and certificate trust (trustd: Go's crypto/x509, gh, terraform; OCSP). Not the
// security server: it serves the login keychain, where git's, gh's and docker's credentials
// are. The host's unix sockets stay out as with the network denied (tmux, an ssh or gpg agent,
// Docker's socket): only mDNSResponder's and the command's own in the writable subtrees.
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
  (global-name "com.apple.ocspd"))
; The host's unix sockets: none but the resolver's (the writable subtrees' below).
(deny network-outbound (remote unix-socket))
(allow network-outbound (remote unix-socket (literal "/private/var/run/mDNSResponder")))
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

void AddOnce(std::vector<std::filesystem::path>& list, const std::filesystem::path& path) {
  if (std::find(list.begin(), list.end(), path) == list.end()) list.push_back(path);
}

bool InAny(const std::filesystem::path& path, const std::vector<std::filesystem::path>& roots) {
  for (const auto& root : roots) {
    if (core::IsWithin(path, root)) return true;
  }
  return false;
}

// The deepest writable root that holds `path` below itself, and the rest of `path` under it:
// every name the command could create or rename there is matched in any case, the missing
// directories on the way included. Outside the writable roots, the parent and the last name.
std::pair<std::filesystem::path, std::string> SplitAtBase(
    const std::filesystem::path& path, const std::vector<std::filesystem::path>& writable) {
  std::filesystem::path base = path.parent_path();
  bool in_root = false;
  for (const std::filesystem::path& root : writable) {
    const bool below = root != path && core::IsWithin(path, root);
    if (below && (!in_root || root.native().size() > base.native().size())) {
      base = root;
      in_root = true;
    }
  }
  return {base, path.lexically_relative(base).string()};
}

class ProfileBuilder {
 public:
  // A parameter for `path`, named PREFIX_N; returns its SBPL reference.
  std::string Param(const char* prefix, std::size_t index, const std::filesystem::path& path) {
    std::string name = fmt::format("{}_{}", prefix, index);
    params_.emplace_back(name, path.string());
    return fmt::format("(param \"{}\")", name);
  }
  // `path` as a regex: its base (the writable root it lies in, else its parent) quoted, the
  // rest with each ASCII letter in either case (CaseInsensitiveRegex), as parameters
  // PREFIX_BASE_N and PREFIX_NAME_N; returns the SBPL regex filter.
  std::string CaseRegex(const char* prefix, std::size_t index, const std::filesystem::path& path,
                        const std::vector<std::filesystem::path>& writable, bool subtree) {
    const auto [base, rest] = SplitAtBase(path, writable);
    const std::string base_name = fmt::format("{}_BASE_{}", prefix, index);
    const std::string regex_name = fmt::format("{}_NAME_{}", prefix, index);
    params_.emplace_back(base_name, base == base.root_path() ? base.string() : base.string() + "/");
    params_.emplace_back(regex_name, CaseInsensitiveRegex(rest, subtree));
    return fmt::format("(regex (string-append \"^\" (regex-quote (param \"{}\")) (param \"{}\")))",
                       base_name, regex_name);
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
                    const char* prefix, const std::vector<std::filesystem::path>& paths,
                    const std::vector<std::filesystem::path>& writable) {
  if (paths.empty()) return;
  b.text() += fmt::format("\n; {}\n({}", comment, action_operations);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string param = b.Param(prefix, i, paths[i]);
    b.text() += fmt::format("\n  (literal {})\n  (subpath {})\n  {}", param, param,
                            b.CaseRegex(prefix, i, paths[i], writable, /*subtree=*/true));
  }
  b.text() += ")\n";
}

// The pins: each exactly and, below a writable root, by its path there in any case (so a
// missing directory on the way to a protected path is not created as `.Config` either).
void AddPinRule(ProfileBuilder& b, const std::vector<std::filesystem::path>& pins,
                const std::vector<std::filesystem::path>& writable) {
  if (pins.empty()) return;
  b.text() +=
      "\n; Writable roots and the directories on the way to protected paths: not renamed,\n"
      "; removed or created (in any case of their names); what they hold stays writable, so\n"
      "; nothing protected moves out from under its rule or is reached through a link.\n"
      "(deny file-write-unlink file-write-create";
  for (std::size_t i = 0; i < pins.size(); ++i) {
    b.text() += fmt::format("\n  (literal {})", b.Param("PINNED", i, pins[i]));
    const bool root = std::find(writable.begin(), writable.end(), pins[i]) != writable.end();
    if (!root && InAny(pins[i], writable)) {
      b.text() += "\n  " + b.CaseRegex("PINNED", i, pins[i], writable, /*subtree=*/false);
    }
  }
  b.text() += ")\n";
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

// macOS reaches the files of /Users, /private, /Library, ... also through the Data volume's
// mount point (firmlinks); whether Seatbelt matches them at the firmlinked path is not
// documented: a denial is written for both (one for a path that does not exist denies
// nothing else).
constexpr const char* kDataVolume = "/System/Volumes/Data";

std::vector<std::filesystem::path> WithDataVolume(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::filesystem::path> out = paths;
  for (const std::filesystem::path& path : paths) {
    if (!core::IsWithin(path, kDataVolume)) AddOnce(out, kDataVolume / path.relative_path());
  }
  return out;
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

std::string CaseInsensitiveRegex(const std::string& relative, bool subtree) {
  std::string out;
  for (const char c : relative) {
    const auto u = static_cast<unsigned char>(c);
    if (c == 's' || c == 'S') {
      out += "([sS]|\xC5\xBF)";  // U+017F LATIN SMALL LETTER LONG S folds to s
    } else if (c == 'k' || c == 'K') {
      out += "([kK]|\xE2\x84\xAA)";  // U+212A KELVIN SIGN folds to k
    } else if (std::isalpha(u) != 0 && u < 0x80) {
      out += fmt::format("[{}{}]", static_cast<char>(std::tolower(u)),
                         static_cast<char>(std::toupper(u)));
    } else if (std::isdigit(u) != 0 || c == '_' || c == '-' || c == '/' || u >= 0x80) {
      out += c;  // not special in a regex; bytes of other scripts kept as they are
    } else if (c == ']' || c == '[' || c == '\\' || c == '^') {
      out += '.';  // no class holds it plainly: any one character (the denial matches more)
    } else {
      out += fmt::format("[{}]", c);
    }
  }
  out += subtree ? "(/|$)" : "$";
  return out;
}

SeatbeltProfile RenderSeatbelt(const SeatbeltPolicy& policy) {
  ProfileBuilder b;
  AddRule(b,
          "The real homes, also at the Data volume's path (/System/Volumes/Data/Users/...):\n"
          "; neither readable nor listable (what the host creates there later neither), except\n"
          "; the grants below.",
          "deny file-read*", "subpath", "HOME", WithDataVolume(policy.hidden_homes));
  AddRule(b,
          "Granted in a home: the tool paths, sandbox.readable_paths, the workspace and the\n"
          "; writable roots there (a secret inside one stays denied at the end).",
          "allow file-read*", "subpath", "GRANT", policy.home_grants);
  AddRule(b, "The directories from a home to each grant: stat (realpath, getcwd), not listing.",
          "allow file-read-metadata", "literal", "GRANT_PATH", GrantPaths(policy));
  AddRule(b, "Writes: the workspace, the writable roots and the private HOME/TMPDIR.",
          "allow file-write*", "subpath", "WRITABLE", policy.writable);
  b.text() += policy.network_allowed ? kNetworkAllowed : kNetworkDenied;
  // The command's own unix sockets. Never without a filter: an unfiltered allow would let every
  // connection out.
  if (!policy.writable.empty()) {
    b.text() +=
        "\n; Connections to unix sockets inside the writable subtrees.\n(allow network-outbound";
    for (std::size_t i = 0; i < policy.writable.size(); ++i) {
      b.text() += fmt::format("\n  (remote unix-socket (subpath {}))",
                              b.Param("SOCKET", i, policy.writable[i]));
    }
    b.text() += ")\n";
  }
  AddProtectRule(b,
                 "Git metadata and host-run files: read-only in writable subtrees; an absent one\n"
                 "; is not created in any case of its name.",
                 "deny file-write*", "READ_ONLY", policy.read_only, policy.writable);
  AddPinRule(b, Pins(policy), policy.writable);
  std::vector<std::filesystem::path> hidden = policy.hidden_dirs;
  hidden.insert(hidden.end(), policy.hidden_files.begin(), policy.hidden_files.end());
  hidden.insert(hidden.end(), policy.hidden_absent.begin(), policy.hidden_absent.end());
  AddProtectRule(b,
                 "Hidden credentials, present or not (one created during the run too), also at\n"
                 "; the Data volume's path: unreadable and unwritable in any case of their names.",
                 "deny file-read* file-write*", "HIDDEN", WithDataVolume(hidden), policy.writable);
  // Hard links: whether Seatbelt checks a link's source or its new name is not documented,
  // and a link of a hidden or protected file into a writable place would be read or changed
  // there. None is made; tools fall back to copying (cargo, git clone --local, pnpm).
  b.text() +=
      "\n; No hard links anywhere: a link of a hidden or protected file into a writable place\n"
      "; would be read or changed there. Tools fall back to copying (cargo, git, pnpm).\n"
      "(deny file-link (subpath \"/\"))\n";
  return b.Take();
}

std::vector<SeatbeltPolicy> ProbeVariants(const std::filesystem::path& scratch) {
  SeatbeltPolicy policy;
  policy.writable = {scratch / "allowed"};
  policy.read_only = {scratch / "allowed" / ".git"};
  policy.hidden_dirs = {scratch / "hidden-dir"};
  policy.hidden_files = {scratch / "hidden-file"};
  // A top-level one too: its base is "/" itself.
  policy.hidden_absent = {scratch / "hidden-absent", "/cordon-probe-absent"};
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
