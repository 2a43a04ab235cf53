#include "plan/file_denials.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>

#include "core/paths.h"

namespace cordon::plan {
namespace {

namespace fs = std::filesystem;

// Where the system keeps what the package manager installs: never suggested as writable.
constexpr std::array<std::string_view, 17> kSystemDirectories = {
    "/usr", "/etc", "/bin",  "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
    "/opt", "/var", "/proc", "/sys",  "/dev", "/run",   "/snap",  "/nix"};

// Lies in what looks like git's metadata (a .git, a bare repository's x.git): only to keep
// such a directory from being offered as a writable root, never to name the rule.
bool LooksLikeGitDirectory(const fs::path& path) {
  return std::any_of(path.begin(), path.end(), [](const fs::path& part) {
    const std::string name = part.string();
    return name == ".git" || (name.size() > 4 && name.ends_with(".git"));
  });
}

// The deepest mount of the plan over `target` (the last of equals: later mounts lie on top).
const MountOp* MountOver(const LaunchPlan& plan, const fs::path& target) {
  const MountOp* found = nullptr;
  for (const MountOp& op : plan.mounts) {
    if (op.kind == MountOpKind::kDirectory || !core::IsWithin(target, op.path)) continue;
    if (found == nullptr || op.path.native().size() >= found->path.native().size()) found = &op;
  }
  return found;
}

bool Masked(const LaunchPlan& plan, const fs::path& path) {
  return std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const MountOp& op) {
    const bool mask = op.kind == MountOpKind::kMaskDirectory || op.kind == MountOpKind::kMaskFile;
    return mask && core::IsWithin(path, op.path);
  });
}

bool System(const fs::path& path) {
  return std::any_of(kSystemDirectories.begin(), kSystemDirectories.end(),
                     [&](std::string_view dir) { return core::IsWithinText(path.native(), dir); });
}

constexpr const char* kGitRule = "sandbox.protect_git_metadata: .git is read-only in the sandbox";
constexpr const char* kGitFix =
    "by design: commit with cordon's host-side git_commit tool (cordon mcp) or `cordon git "
    "commit`; other changes to .git (stash, branches, config, hooks) are made outside the "
    "sandbox";
constexpr const char* kHostRunRule =
    "sandbox.protect_host_run_files: files the agent, an editor or your shell runs on the host "
    "are read-only in the sandbox (docs/host-run-files.md)";
constexpr const char* kHostRunFix =
    "by design: the user changes it on the host, where they see what will run there (or turns "
    "the protection of that entry off on purpose: sandbox.host_run_files.remove in their own "
    "config)";
constexpr const char* kReadOnlyModeRule = "sandbox.mode: read_only";
constexpr const char* kReadOnlyModeFix =
    "allow writes to the workspace: cordon run --mode workspace_write, or sandbox.mode "
    "\"workspace_write\" in your config";
constexpr const char* kHiddenRule = "a hidden path (sandbox.hidden_paths and the built-in list)";
constexpr const char* kHiddenFix =
    "by design: secrets stay out of the sandbox; work with what the command needs in the "
    "workspace";
constexpr const char* kResolverRule =
    "sandbox.network: domains (the sandbox's resolv.conf is cordon's, read-only)";
constexpr const char* kResolverFix =
    "by design: names resolve through cordon's resolver for the allowed domains; allow a name "
    "with cordon run --allow-domain NAME";
constexpr const char* kHomeRule =
    "sandbox.home: the real home is hidden and read-only in the sandbox";
constexpr const char* kHomeFix =
    "by design: HOME in the sandbox is a private directory that ends with the command; write "
    "what must last in the workspace, and let tools' caches persist with sandbox.tool_caches";
constexpr const char* kTmpRule =
    "the host's /tmp holding the workspace is seen read-only, beside the workspace (decision "
    "0046)";
constexpr const char* kTmpFix =
    "by design: the command's own temporary files go to $TMPDIR; write what must last in the "
    "workspace";
constexpr const char* kOutsideRule =
    "sandbox.writable_roots: only the workspace and the writable roots are writable";
constexpr const char* kSystemFix =
    "by design: system directories are changed outside cordon; install into the workspace "
    "instead (a virtual environment, a --prefix or node_modules there, a build directory)";
constexpr const char* kRootFix =
    "by design: the file system's top level is not made writable; write in the workspace";

// The rule and the fix for a target outside the writable areas (no mount of the plan over it,
// or Landlock's refusal): the directory holding it may be offered as a writable root, unless
// it is a system directory, a home or above one, `/`, or holds or lies in a secret.
std::pair<std::string, std::string> Outside(const LaunchPlan& plan, const fs::path& target,
                                            const fs::path& caller_home) {
  const fs::path dir = target.parent_path();
  if (System(target)) return {kOutsideRule, kSystemFix};
  if (!caller_home.empty() && core::IsWithin(caller_home, dir)) {
    return {kOutsideRule,
            "by design: a home is not made writable whole; HOME in the sandbox is a private "
            "directory, and a project of your own can be a writable root"};
  }
  if (dir.empty() || dir == "/") return {kOutsideRule, kRootFix};
  if (!caller_home.empty() && core::IsWithin(dir, caller_home)) {
    const fs::path below = dir.lexically_relative(caller_home);
    if (!below.empty() && below.begin()->string().starts_with(".")) {
      return {kOutsideRule,
              "by design: the home's own directories (.cache, .config, .local, ...) are not "
              "made writable; HOME in the sandbox is a private directory, and tools' caches "
              "persist with sandbox.tool_caches"};
    }
  }
  if (Masked(plan, dir) || LooksLikeGitDirectory(dir)) return {kOutsideRule, kHiddenFix};
  return {kOutsideRule,
          fmt::format("make the directory writable: cordon run --writable-root {0}, or add "
                      "\"{0}\" to sandbox.writable_roots in your config",
                      dir.string())};
}

std::optional<std::pair<std::string, std::string>> Explain(const LaunchPlan& plan,
                                                           const fs::path& target,
                                                           const fs::path& caller_home) {
  for (const Placeholder& p : plan.placeholders) {
    if (!core::IsWithin(target, p.path())) continue;
    if (p.relative == ".git") return std::pair{kGitRule, kGitFix};
    return std::pair{kHostRunRule, kHostRunFix};
  }
  const MountOp* op = MountOver(plan, target);
  if (op == nullptr) return Outside(plan, target, caller_home);
  switch (op->kind) {
    case MountOpKind::kBindReadOnly:
      if (op->git_metadata) return std::pair{kGitRule, kGitFix};
      if (op->path == plan.workspace) return std::pair{kReadOnlyModeRule, kReadOnlyModeFix};
      // A writable root bound read-only is read_only mode's too.
      if (std::any_of(plan.landlock.writable.begin(), plan.landlock.writable.end(),
                      [&](const fs::path& w) { return w == op->path; })) {
        return std::pair{kReadOnlyModeRule, kReadOnlyModeFix};
      }
      return std::pair{kHostRunRule, kHostRunFix};
    case MountOpKind::kMaskDirectory:
    case MountOpKind::kMaskFile:
      return std::pair{kHiddenRule, kHiddenFix};
    case MountOpKind::kResolverConfig:
      return std::pair{kResolverRule, kResolverFix};
    case MountOpKind::kHomeView:
      // The same empty view stands over a /tmp or /var/tmp that holds the workspace.
      if (op->path == "/tmp" || op->path == "/var/tmp") return std::pair{kTmpRule, kTmpFix};
      return std::pair{kHomeRule, kHomeFix};
    case MountOpKind::kBindWritable:
    case MountOpKind::kTmpfs:
    case MountOpKind::kDirectory:
      // Writable mounts: what refused is beneath them (Landlock, a file bound read-only the
      // plan does not know): say what is known without guessing a fix.
      return Outside(plan, target, caller_home);
  }
  return std::nullopt;
}

}  // namespace

void ExplainFileDenials(const LaunchPlan& plan, const fs::path& caller_home,
                        std::vector<Denial>& denials) {
  for (Denial& d : denials) {
    if ((d.layer != "mount view" && d.layer != "landlock") || !d.rule.empty()) continue;
    const fs::path target(d.target);
    if (!target.is_absolute()) continue;
    std::optional<std::pair<std::string, std::string>> why = Explain(plan, target, caller_home);
    if (!why) continue;
    d.rule = std::move(why->first);
    d.fix = std::move(why->second);
  }
}

}  // namespace cordon::plan
