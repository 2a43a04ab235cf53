#include "bwrap/argv.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "plan/host_run_paths.h"

namespace cordon::bwrap {
namespace {

class ArgvBuilder {
 public:
  void Add(std::string_view word) { argv_.emplace_back(word); }
  void Add(std::string_view option, const std::filesystem::path& path) {
    argv_.emplace_back(option);
    argv_.push_back(path.string());
  }
  // bwrap's two-path options take the source in the host (old root) and the destination in
  // the sandbox; cordon's plan keeps every path at the same place in both.
  void Same(std::string_view option, const std::filesystem::path& path) {
    argv_.emplace_back(option);
    argv_.push_back(path.string());
    argv_.push_back(path.string());
  }
  std::vector<std::string> Take() { return std::move(argv_); }

 private:
  std::vector<std::string> argv_;
};

// A bind of the descriptor `fd` (bwrap >= 0.5) at the plan's path.
void BindFd(ArgvBuilder& b, std::string_view option, int fd, const std::filesystem::path& path) {
  b.Add(option);
  b.Add(std::to_string(fd));
  b.Add(path.string());
}

// --perms applies to the next --tmpfs/--dir only (bwrap >= 0.5). `fd`: bind_fds' entry.
void AddMountOp(ArgvBuilder& b, const plan::MountOp& op, int fd) {
  const bool bind =
      op.kind == plan::MountOpKind::kBindWritable || op.kind == plan::MountOpKind::kBindReadOnly;
  if (bind && fd == kBindSkipped) return;
  if (bind && fd >= 0) {
    BindFd(b, op.kind == plan::MountOpKind::kBindWritable ? "--bind-fd" : "--ro-bind-fd", fd,
           op.path);
    return;
  }
  switch (op.kind) {
    case plan::MountOpKind::kBindWritable:
      // Optional writable binds are the pins of a hidden path's ancestors (so it cannot be
      // moved out from under its mask): one that vanished pins nothing.
      b.Same(op.optional ? "--bind-try" : "--bind", op.path);
      return;
    case plan::MountOpKind::kBindReadOnly:
      // An optional pin (an ancestor kept read-only) may be gone: the -try form skips it.
      b.Same(op.optional ? "--ro-bind-try" : "--ro-bind", op.path);
      return;
    case plan::MountOpKind::kTmpfs:
      b.Add("--perms");
      b.Add("1777");
      b.Add("--tmpfs", op.path);
      return;
    case plan::MountOpKind::kDirectory:
      b.Add("--perms");
      b.Add("0700");
      b.Add("--dir", op.path);
      return;
    case plan::MountOpKind::kMaskDirectory:
      // An empty directory that stays empty: a tmpfs, then the whole mount read-only.
      b.Add("--perms");
      b.Add("0555");
      b.Add("--tmpfs", op.path);
      b.Add("--remount-ro", op.path);
      return;
    case plan::MountOpKind::kMaskFile:
      b.Add("--ro-bind");
      b.Add("/dev/null");
      b.Add(op.path.string());
      return;
    case plan::MountOpKind::kHomeView:
      // Writable while the grants and roots are bound into it; read-only after the last
      // (RenderBwrapArgv).
      b.Add("--perms");
      b.Add("0755");
      b.Add("--tmpfs", op.path);
      return;
    case plan::MountOpKind::kResolverConfig:
      return;  // never planned here: network by domain refuses this backend first
  }
}

}  // namespace

Result<std::vector<std::string>> RenderBwrapArgv(const plan::LaunchPlan& plan,
                                                 const BwrapInvocation& how) {
  if (!plan.sandboxed) {
    return Fail(ErrorCode::kInvalidArgument, "bwrap backend: plan is not sandboxed (mode off)");
  }
  if (!plan.namespaces.mount || !plan.namespaces.pid) {
    return Fail(ErrorCode::kUnavailable,
                "bwrap backend: the plan has no mount or PID namespace (Landlock-only fallback); "
                "only the native backend can run it");
  }
  if (how.trampoline.empty() && (plan.landlock.abi > 0 || plan.seccomp.enabled)) {
    return Fail(ErrorCode::kInvalidArgument,
                "bwrap backend: Landlock and seccomp need the in-sandbox trampoline");
  }
  if (plan.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "bwrap backend: empty command");
  if (!how.bind_fds.empty() && how.bind_fds.size() != plan.mounts.size()) {
    return Fail(ErrorCode::kInvalidArgument, "bwrap backend: one bind descriptor per mount");
  }
  if (how.bwrap.empty() || how.bwrap.front() != '/') {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("bwrap backend: bwrap path {:?} is not absolute", how.bwrap));
  }

  ArgvBuilder b;
  b.Add(how.bwrap);
  // Process tree: killed with cordon, its own session (no TIOCSTI into the caller's terminal),
  // its own PID namespace (bwrap's init reaps; the namespace dies with the command).
  b.Add("--die-with-parent");
  b.Add("--new-session");
  if (how.info_fd >= 0) {
    b.Add("--info-fd");
    b.Add(std::to_string(how.info_fd));
  }
  if (plan.namespaces.user) b.Add("--unshare-user");
  b.Add("--unshare-pid");
  if (plan.namespaces.net) b.Add("--unshare-net");  // bwrap brings up the private loopback
  if (plan.namespaces.ipc) b.Add("--unshare-ipc");
  if (plan.namespaces.uts) {
    b.Add("--unshare-uts");
    b.Add("--hostname");
    b.Add(plan.hostname);
  }
  b.Add("--cap-drop");
  b.Add("ALL");
  // The host read-only (bwrap remounts every submount read-only too), a fresh /proc (bwrap
  // keeps /proc/sys, sysrq-trigger, irq and bus read-only) and a minimal /dev.
  b.Same("--ro-bind", "/");
  b.Add("--proc", "/proc");
  b.Add("--dev", "/dev");
  b.Add("--tmpfs", "/dev/shm");
  for (const auto& [source, target] : how.extra_ro_binds) {
    b.Add("--ro-bind");
    b.Add(source);
    b.Add(target);
  }
  for (std::size_t i = 0; i < plan.mounts.size(); ++i) {
    AddMountOp(b, plan.mounts[i], how.bind_fds.empty() ? kBindByPath : how.bind_fds[i]);
  }
  // A hidden home's view stays empty from here: nothing can be created in it (the mounts in
  // it keep their own flags).
  for (const plan::MountOp& op : plan.mounts) {
    if (op.kind == plan::MountOpKind::kHomeView) b.Add("--remount-ro", op.path);
  }
  // The directories the command's placeholders were made in, pinned (bound onto themselves) so
  // that none can be renamed away and made again; bwrap binds them from the host, so one that
  // the plan pins already (something protected or masked may lie below it) is left alone.
  for (const std::filesystem::path& parent : plan::PlaceholderParents(plan.placeholders)) {
    const bool planned = std::any_of(plan.mounts.begin(), plan.mounts.end(), [&](const auto& op) {
      return op.path == parent && op.kind == plan::MountOpKind::kBindWritable;
    });
    if (!planned) b.Same("--bind-try", parent);
  }
  // The command's placeholders, each bound onto itself read-only. bwrap mounts by path and
  // would follow a link: the planner gives it directory placeholders only.
  for (const plan::Placeholder& placeholder : plan.placeholders) {
    if (!placeholder.directory) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("bwrap backend: {} is held by a link placeholder (a concurrent run "
                              "of the native backend made it), which bubblewrap cannot cover; "
                              "run the command again once that run is done",
                              placeholder.path().string()));
    }
    b.Same("--ro-bind", placeholder.path());
  }
  b.Add("--chdir", plan.cwd);
  // The environment is the plan's, entirely: nothing of bwrap's own environment passes.
  b.Add("--clearenv");
  for (const std::string& entry : plan.env) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("bwrap backend: environment entry {:?} is not NAME=value", entry));
    }
    b.Add("--setenv");
    b.Add(std::string_view(entry).substr(0, eq));
    b.Add(std::string_view(entry).substr(eq + 1));
  }
  b.Add("--");
  for (const std::string& word : how.trampoline) b.Add(word);
  for (const std::string& word : plan.argv) b.Add(word);
  return b.Take();
}

}  // namespace cordon::bwrap
