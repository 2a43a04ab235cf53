#include "seatbelt/profile.h"

#include <fmt/format.h>

#include "core/paths.h"

namespace cordon::seatbelt {
namespace {

// The fixed part. Rules are last-match-wins, so the denials that carve exceptions out of the
// allowances (git metadata, hidden credentials) come after them, at the end.
constexpr const char* kPreamble = R"((version 1)
(deny default)

; Processes: the command and its children, inside this sandbox only.
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)

; Services ordinary tools need: user and group lookup, notifications, logging.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.notification_center")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.logd"))
(allow ipc-posix-shm-read-data (ipc-posix-name "apple.shm.notification_center"))

; Reads: the host, like the Linux backends (credentials are denied at the end).
(allow file-read*)

; Terminals and the null devices are written by ordinary tools.
(allow file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero")
  (literal "/dev/tty")
  (regex #"^/dev/ttys[0-9]+$"))
)";

class ProfileBuilder {
 public:
  // A parameter for `path`, named PREFIX_N; returns its SBPL reference.
  std::string Param(const char* prefix, std::size_t index, const std::filesystem::path& path) {
    std::string name = fmt::format("{}_{}", prefix, index);
    params_.emplace_back(name, path.string());
    return fmt::format("(param \"{}\")", name);
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

bool InAny(const std::filesystem::path& path, const std::vector<std::filesystem::path>& roots) {
  for (const auto& root : roots) {
    if (core::IsWithin(path, root)) return true;
  }
  return false;
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
      case plan::MountOpKind::kBindWritable:
      case plan::MountOpKind::kTmpfs:  // Linux-only: the private dir replaces these
      case plan::MountOpKind::kDirectory:
      case plan::MountOpKind::kHomeView:  // never planned here: the planner refuses first
      case plan::MountOpKind::kResolverConfig:
        break;
    }
  }
  // A missing .git or host-run file in a writable root: `deny file-write* (subpath ...)` denies
  // creating the path itself, so it cannot be created (Linux holds a placeholder instead).
  for (const std::filesystem::path& git : plan.absent_protected) {
    if (InAny(git, policy.writable)) policy.read_only.push_back(git);
  }
  return policy;
}

SeatbeltProfile RenderSeatbelt(const SeatbeltPolicy& policy) {
  ProfileBuilder b;
  AddRule(b, "Writes: the workspace, the writable roots and the private HOME/TMPDIR.",
          "allow file-write*", "subpath", "WRITABLE", policy.writable);
  if (policy.network_allowed) {
    b.text() += "\n; Network: allowed (the host's network).\n(allow network*)\n";
  } else {
    // No connection of any kind leaves: no IP at all (macOS has no private loopback, so a
    // connection to 127.0.0.1 would reach the host's services), unix sockets only inside the
    // writable subtrees (the command's own).
    // Binding creates the socket file, which needs file-write-create: only in writable places.
    b.text() +=
        "\n; Network: denied (no IP at all). Unix sockets: the command's own.\n"
        "(allow network-bind network-inbound (local unix-socket))\n";
    AddRule(b, "Connections only to sockets inside the writable subtrees.",
            "allow network-outbound", "subpath", "SOCKET", policy.writable);
  }
  AddRule(b, "Git metadata and host-run files stay read-only in writable subtrees.",
          "deny file-write*", "subpath", "READ_ONLY", policy.read_only);
  AddRule(b, "Ancestors of hidden paths: not renamed or removed (contents stay writable).",
          "deny file-write*", "literal", "PINNED", policy.pinned);
  AddRule(b, "Hidden credential directories: unreadable and unwritable.",
          "deny file-read* file-write*", "subpath", "HIDDEN_DIR", policy.hidden_dirs);
  AddRule(b, "Hidden credential files.", "deny file-read* file-write*", "literal", "HIDDEN_FILE",
          policy.hidden_files);
  return b.Take();
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
