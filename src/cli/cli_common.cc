#include "cli/cli_common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "config/enums.h"
#include "config/load.h"
#include "config/overrides.h"
#include "config/validate.h"
#include "core/syscall_error.h"
#include "session/session_internals.h"
#include "worktree/strict_policy.h"

namespace cordon::cli {

Caller ThisProcess() {
  Caller caller;
  std::error_code ec;
  caller.cwd = std::filesystem::current_path(ec);
  if (ec) caller.cwd.clear();
  caller.env = config::FromProcessEnvironment();
  return caller;
}

std::filesystem::path RuntimeDirectory() {
  const char* dir = std::getenv("XDG_RUNTIME_DIR");
  return dir != nullptr && dir[0] == '/' ? std::filesystem::path(dir) : std::filesystem::path();
}

Result<Config> LoadConfig(const GlobalOptions& global, const SandboxFlags& flags,
                          const Caller& caller) {
  const config::Env& env = caller.env;
  std::optional<std::filesystem::path> explicit_path;
  if (!global.config_path.empty()) {
    explicit_path = caller.cwd.empty() ? std::filesystem::path(global.config_path)
                                       : caller.cwd / global.config_path;
  }
  CORDON_TRY(Config loaded, config::LoadUserConfig(explicit_path, env));

  config::ConfigOverrides overrides;
  if (!flags.mode.empty()) {
    CORDON_TRY(overrides.mode, config::ParseSandboxMode(flags.mode));
  }
  if (flags.unsafe) {
    if (overrides.mode && *overrides.mode != SandboxMode::kOff) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--unsafe selects mode off and contradicts --mode {}", flags.mode));
    }
    overrides.mode = SandboxMode::kOff;
  }
  if (!flags.network.empty()) {
    CORDON_TRY(overrides.network, config::ParseNetworkPolicy(flags.network));
  }
  overrides.allowed_domains = flags.allow_domains;
  overrides.denied_domains = flags.deny_domains;
  if (!flags.backend.empty()) {
    CORDON_TRY(overrides.backend, config::ParseBackendChoice(flags.backend));
  }
  if (!flags.home.empty()) {
    CORDON_TRY(overrides.home, config::ParseHomeView(flags.home));
  }
  if (!flags.tool_caches.empty()) {
    CORDON_TRY(overrides.tool_caches, config::ParseToolCaches(flags.tool_caches));
  }
  overrides.writable_roots = flags.writable_roots;
  overrides.readable_paths = flags.readable_paths;
  // A relative --writable-root is relative to where the user typed it.
  if (!caller.cwd.empty()) overrides.working_directory = caller.cwd;
  if (flags.timeout_seconds) {
    if (!(*flags.timeout_seconds > 0)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("--timeout: expected a number of seconds > 0, found {}",
                              *flags.timeout_seconds));
    }
    overrides.timeout = config::TimeoutFromSeconds(*flags.timeout_seconds);
  }
  overrides.memory_bytes = flags.memory_bytes;
  overrides.processes = flags.processes;
  overrides.open_files = flags.open_files;
  overrides.cpu_seconds = flags.cpu_seconds;
  CORDON_TRY_VOID(config::ApplyOverrides(loaded, overrides, env));
  return loaded;
}

Result<std::filesystem::path> ConfigFilePath(const GlobalOptions& global) {
  if (!global.config_path.empty()) return std::filesystem::path(global.config_path);
  return config::DefaultConfigPath(config::FromProcessEnvironment());
}

int ReportSetupError(const Error& error) {
  fmt::print(stderr, "cordon: {}\n", error.message);
  return kExitSetupFailed;
}

Result<void> CheckWorktreeFlags(const SandboxFlags& flags, bool worktree) {
  if (!worktree) return {};
  return worktree::CheckWorktreeFlags(flags.unsafe, flags.mode);
}

void WarnWhenUnsandboxed(const Config& config, bool worktree, const char* what) {
  if (config.sandbox.mode != SandboxMode::kOff || worktree) return;
  fmt::print(stderr,
             "cordon: WARNING: {} without a sandbox (mode off): {} can write, read and connect "
             "anywhere your user can\n",
             what,
             std::string_view(what) == "serving" ? "every command the model runs" : "the command");
}

Result<ResolvedWorkspace> ResolveWorkspace(Config& config, const std::string& workspace_flag,
                                           bool worktree) {
  ResolvedWorkspace resolved;
  resolved.path = workspace_flag;
  resolved.is_cwd = resolved.path.empty() && !worktree;
  if (resolved.path.empty()) {
    std::error_code ec;
    resolved.path = std::filesystem::current_path(ec);
    if (ec) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("cannot read the current directory: {}", ec.message()));
    }
  }
  if (worktree) {
    // Strict policy: the worktree (found from the workspace) is the only writable root.
    CORDON_TRY(worktree::WorktreeMode mode, worktree::EnterWorktreeMode(config, resolved.path));
    if (auto notice = worktree::DroppedRootsNotice(mode.dropped_roots); !notice.empty()) {
      fmt::print(stderr, "cordon: {}\n", notice);
    }
    resolved.path = mode.worktree.root;
    resolved.linked = std::move(mode.worktree);
  }
  return resolved;
}

Result<void> CheckSessionIsHere(const Session& session, const ResolvedWorkspace& workspace) {
  if (!workspace.is_cwd) return {};
  struct stat here {};
  if (::stat(".", &here) != 0) return core::FailSyscall("stat", ". (the current directory)");
  const plan::FileId& pinned = SessionInternals::StateOf(session).workspace_id;
  if (pinned.dev != static_cast<std::uint64_t>(here.st_dev) ||
      pinned.ino != static_cast<std::uint64_t>(here.st_ino)) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("the workspace {} is no longer the current directory (its name was "
                            "moved or swapped for a link while cordon started): nothing ran",
                            session.workspace().string()));
  }
  return {};
}

namespace {
const char* YesNo(bool value) { return value ? "yes" : "no"; }
}  // namespace

void PrintCapabilities(const Capabilities& c) {
  const Enforcement& e = c.enforcement;
  fmt::print("mode:                 {}\n", SandboxModeName(c.mode));
  fmt::print("network:              {}\n", NetworkPolicyName(c.network));
  if (c.network == NetworkPolicy::kDomains) {
    fmt::print("  allowed domains:    {}\n",
               c.allowed_domains.empty() ? "(none)"
                                         : fmt::format("{}", fmt::join(c.allowed_domains, " ")));
    fmt::print(
        "  denied domains:     {}\n",
        c.denied_domains.empty() ? "(none)" : fmt::format("{}", fmt::join(c.denied_domains, " ")));
    fmt::print("  parent proxy:       {}\n",
               c.parent_proxy.empty() ? "(none: connected directly)" : c.parent_proxy);
  }
  fmt::print("backend:              {} ({})\n", c.backend, c.backend_reason);
  fmt::print("filesystem enforced:  {}\n", YesNo(c.filesystem_enforced));
  fmt::print("network enforced:     {}\n", c.network == NetworkPolicy::kAllow
                                               ? "not requested (network allowed)"
                                               : YesNo(c.network_enforced));
  fmt::print("layers:\n");
  fmt::print("  user namespace      {}\n", YesNo(e.user_namespace));
  fmt::print("  mount namespace     {}\n", YesNo(e.mount_namespace));
  fmt::print("  pid namespace       {}\n", YesNo(e.pid_namespace));
  fmt::print("  net namespace       {}\n", YesNo(e.net_namespace));
  fmt::print("  ipc namespace       {}\n", YesNo(e.ipc_namespace));
  fmt::print("  landlock            {}\n",
             e.landlock_abi > 0 ? fmt::format("ABI {}", e.landlock_abi) : std::string("no"));
  fmt::print("  seccomp             {}\n", YesNo(e.seccomp));
  fmt::print("  capabilities drop   {}\n", YesNo(e.capabilities_dropped));
  fmt::print("  no_new_privs        {}\n", YesNo(e.no_new_privs));
  if (!c.limits.empty()) fmt::print("limits:\n");
  for (const LimitEnforcement& l : c.limits) {
    // "memory_bytes  1073741824 by cgroup v2 memory.max (below ...)" or "none (could use ...)".
    const std::string value = l.name == "timeout_seconds"
                                  ? fmt::format("{} s", static_cast<double>(l.value) / 1000.0)
                                  : std::to_string(l.value);
    const std::string mechanism = l.mechanism.empty() ? "nothing on this machine" : l.mechanism;
    if (l.value == 0) {
      fmt::print("  {:<19} none (would use: {})\n", l.name, mechanism);
    } else {
      fmt::print("  {:<19} {} by {}\n", l.name, value, mechanism);
    }
  }
  if (!c.host_run_files.empty()) {
    fmt::print("read-only in each writable root (host-run files):\n  {}\n",
               fmt::join(c.host_run_files, " "));
  }
  if (c.nested_project_depth > 0) {
    fmt::print("protected as the roots are: projects nested up to {} levels below them\n",
               c.nested_project_depth);
  }
  if (c.home == HomeView::kHidden) {
    fmt::print(
        "the real homes: hidden (visible: the roots in them, tool paths, PATH and toolchain "
        "directories{}{})\n",
        c.readable_paths.empty() ? "" : ", ", fmt::join(c.readable_paths, ", "));
  } else {
    fmt::print(
        "the real homes: read-only (secrets outside the built-in list and hidden_paths "
        "are readable; sandbox.home \"hidden\" shows only what is granted)\n");
  }
  switch (c.tool_caches) {
    case ToolCaches::kShared:
      fmt::print("tool caches: kept across commands, one for all your workspaces (cordon cache)\n");
      break;
    case ToolCaches::kWorkspace:
      fmt::print("tool caches: kept across commands, one per workspace (cordon cache)\n");
      break;
    case ToolCaches::kOff:
      fmt::print("tool caches: none kept (each command starts cold)\n");
      break;
  }
  for (const std::string& m : c.missing) fmt::print("MISSING: {}\n", m);
  for (const std::string& u : c.unsupported) fmt::print("not supported: {}\n", u);
  fmt::print("{}\n", c.can_run() ? "commands can run with this configuration"
                                 : "commands are REFUSED with this configuration (fail closed)");
}

}  // namespace cordon::cli
