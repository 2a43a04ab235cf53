// The typed configuration of one cordon session. Produced by cordon::config::Load* (which
// validates and canonicalises) or built by a library caller; consumed read-only by the policy,
// the planner and the backends. A Session pins one Config for its whole life.
//
// The JSON form, its defaults and its schema are documented in docs/config.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cordon {

enum class SandboxMode { kOff, kReadOnly, kWorkspaceWrite };
// kDomains: only the host names and addresses sandbox.allowed_domains lists (docs/config.md).
enum class NetworkPolicy { kDeny, kAllow, kDomains };
enum class BackendChoice { kAuto, kNative, kBwrap, kSeatbelt };
// What the sandboxed command sees of the real homes (docs/decisions/0038, 0040): a read-only
// view of them, or nothing but what is granted (the writable roots inside them, the tool paths,
// sandbox.readable_paths); kAuto (the default) is kHidden where the sandbox has a mount
// namespace and kReadOnly elsewhere, said in the capabilities; kHidden asked for explicitly
// refuses a run that cannot hide them.
enum class HomeView { kReadOnly, kHidden, kAuto };
// Where the package managers' and build tools' caches live across commands (decision 0041): one
// cordon-owned cache per user shared by every workspace (kShared, the default), one per workspace
// (kWorkspace), or none (kOff: each command starts cold, as its private HOME does). Never the
// host's own caches; workspace_write mode only.
enum class ToolCaches { kShared, kWorkspace, kOff };

// Changes to the built-in list of workspace files a host program later runs or loads tool
// definitions from (config/host_run_files.h, docs/host-run-files.md). Each entry is a path
// relative to a writable root; a trailing "/" names a directory.
struct HostRunFilesConfig {
  std::vector<std::string> add;     // kept read-only in addition to the built-in entries
  std::vector<std::string> remove;  // built-in entries left writable
  bool operator==(const HostRunFilesConfig&) const = default;
};

struct SandboxConfig {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  NetworkPolicy network = NetworkPolicy::kDeny;
  // With network kDomains, the names and addresses the command may reach (allowed_domains) and
  // may not (denied_domains; deny wins): canonical patterns (net/domain_pattern.h), the @lists
  // in them expanded. domain_lists are the user's named lists, canonical, for "@name" in either
  // list and on the command line. Kept, and without effect, with kDeny and kAllow. Only ever
  // read from the user's own config or the command line, never from the workspace.
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  std::map<std::string, std::vector<std::string>> domain_lists;
  // With network kDomains, the HTTP proxy through which cordon makes the command's connections
  // from the host (decision 0053): "auto" (the caller's https_proxy or HTTPS_PROXY, if set),
  // "none", or "http://HOST:PORT". Checked by net::CheckParentProxySetting.
  std::string parent_proxy = "auto";
  // Whether a name the host's DNS has no answer for may be asked of the parent proxy by name
  // (it then resolves the name: cordon's check of internal addresses does not see where it
  // leads). Off by default (decision 0053).
  bool parent_proxy_by_name = false;
  // Extra writable host paths (workspace_write only). Canonical, existing directories or files.
  // Only ever read from the user's own config or the command line, never from the workspace.
  std::vector<std::filesystem::path> writable_roots;
  bool protect_git_metadata = true;
  // Keep the host-run files (HostRunFilesConfig) read-only in every writable root.
  bool protect_host_run_files = true;
  HostRunFilesConfig host_run_files;
  // How many directory levels below each writable root are searched for nested projects
  // (directories holding a .git or a host-run entry), whose .git and host-run files are
  // protected like a root's (docs/host-run-files.md). 0: only the roots themselves.
  std::uint64_t nested_project_depth = 2;
  // Whether a person may approve one command to run outside the sandbox (ADR 0064).
  bool allow_outside_sandbox = true;
  // Paths hidden in addition to the built-in credential list. Absolute (after ~ expansion).
  std::vector<std::filesystem::path> hidden_paths;
  // The homes' view (HomeView) and, with kHidden, the paths inside them the command may read
  // besides the built-in tool paths. Absolute (after ~ expansion); need not exist. Only ever read
  // from the user's own config or the command line.
  HomeView home = HomeView::kAuto;
  std::vector<std::filesystem::path> readable_paths;
  // The tools' caches (ToolCaches): persistent, cordon-owned, wired through each tool's own
  // variable (plan/tool_caches.h).
  ToolCaches tool_caches = ToolCaches::kShared;
  // The supervisor watches the command's write-intent calls and reports the ones the sandbox
  // refused as denials (docs/denials.md); false: only the kernel's own error.
  bool explain_file_denials = true;
  BackendChoice backend = BackendChoice::kAuto;
  // cordon's own configuration as this process reads it, set by the loader (never from a
  // config file): the file named with --config, or the directory the default file lies in
  // ($XDG_CONFIG_HOME/cordon). Hidden from the command like hidden_paths wherever it lies, and
  // a writable root that would let the command create it (absent, inside the root) is refused.
  std::vector<std::filesystem::path> own_config;
};

struct PolicyConfig {
  std::vector<std::string> deny;           // RE2 patterns; a match refuses the command
  std::vector<std::string> allow;          // RE2 patterns; when non-empty a command must match one
  bool default_deny = true;                // apply cordon's built-in deny rules
  std::vector<std::string> nested_agents;  // extra agent CLI names refused like the built-in ones
  // A command word only known when it runs ($EDITOR f, su${z}do), at the top level of the text:
  // allowed (false, the default: $EDITOR is common) or refused. Inside text a shell parses
  // again it is always refused (default.shell_feed).
  bool deny_unknown_command_words = false;
};

// Resource limits of one command (docs/limits.md, decision 0007). For the four resource limits
// 0 means "no limit": a limit that is set must be enforced (by a cgroup or an rlimit) or the
// run is refused; an unset one never refuses a run.
struct LimitsConfig {
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  // Per stream (stdout, stderr): beyond this cordon keeps the head and the tail.
  std::uint64_t output_bytes = 1024 * 1024;
  // Memory of the whole process tree (cgroup memory.max / v1 memory.limit_in_bytes); the
  // command is OOM-killed beyond it. Needs a usable cgroup memory controller.
  std::uint64_t memory_bytes = 0;
  // Processes and threads alive at once in the sandbox (cgroup pids.max, or RLIMIT_NPROC in
  // the sandbox's own user namespace); fork/clone fails with EAGAIN beyond it.
  std::uint64_t processes = 0;
  // Open descriptors per process (RLIMIT_NOFILE); open/socket fail with EMFILE beyond it.
  std::uint64_t open_files = 0;
  // CPU time per process in seconds (RLIMIT_CPU): SIGXCPU at the limit, SIGKILL one second on.
  std::uint64_t cpu_seconds = 0;
};

struct EnvironmentConfig {
  std::vector<std::string> pass;                         // names copied from the caller
  std::vector<std::pair<std::string, std::string>> set;  // NAME=value set explicitly
};

struct Config {
  SandboxConfig sandbox;
  PolicyConfig command_policy;
  LimitsConfig limits;
  EnvironmentConfig environment;
};

const char* SandboxModeName(SandboxMode mode);     // "off", "read_only", "workspace_write"
const char* NetworkPolicyName(NetworkPolicy net);  // "deny", "allow", "domains"
const char* BackendChoiceName(BackendChoice b);    // "auto", "native", "bwrap", "seatbelt"
const char* HomeViewName(HomeView home);           // "read_only", "hidden", "auto"
const char* ToolCachesName(ToolCaches caches);     // "shared", "workspace", "off"

}  // namespace cordon
