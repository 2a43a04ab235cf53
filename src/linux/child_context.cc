#include "linux/child_context.h"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <string_view>

#include "exec/init_report.h"
#include "linux/init_reaper.h"
#include "linux/seccomp_filter.h"
#include "plan/host_run_paths.h"

namespace cordon::linux_native {
namespace {

unsigned long CloneFlags(const plan::Namespaces& ns) {
  unsigned long flags = 0;
  if (ns.user) flags |= CLONE_NEWUSER;
  if (ns.mount) flags |= CLONE_NEWNS;
  if (ns.pid) flags |= CLONE_NEWPID;
  if (ns.net) flags |= CLONE_NEWNET;
  if (ns.ipc) flags |= CLONE_NEWIPC;
  if (ns.uts) flags |= CLONE_NEWUTS;
  return flags;
}

// The PATH the command will see (the plan's environment), for resolving argv[0] like execvp
// would, but before clone.
std::string_view SandboxPath(const std::vector<std::string>& env) {
  for (const std::string& entry : env) {
    if (entry.starts_with("PATH=")) return std::string_view(entry).substr(5);
  }
  return "/usr/bin:/bin";
}

}  // namespace

std::vector<std::string> ExecCandidates(const std::string& program,
                                        const std::vector<std::string>& env) {
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> candidates;
  std::string_view path = SandboxPath(env);
  while (true) {
    std::size_t colon = path.find(':');
    std::string_view dir = path.substr(0, colon);
    candidates.push_back(fmt::format("{}/{}", dir.empty() ? "." : dir, program));
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return candidates;
}

Result<std::unique_ptr<ChildContext>> PrepareChildContext(const plan::LaunchPlan& plan,
                                                          const exec::StdioFds& stdio) {
  if (plan.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "empty command");
  auto c = std::make_unique<ChildContext>();
  c->namespaces = plan.namespaces;
  c->clone_flags = CloneFlags(plan.namespaces);
  c->stdio[0] = stdio.stdin_fd;
  c->stdio[1] = stdio.stdout_fd;
  c->stdio[2] = stdio.stderr_fd;
  c->uid_map = c->Keep(fmt::format("{0} {0} 1\n", ::geteuid()));
  c->gid_map = c->Keep(fmt::format("{0} {0} 1\n", ::getegid()));
  c->hostname = c->Keep(plan.hostname);

  for (const plan::MountOp& op : plan.mounts) {
    const std::string& path = op.path.native();
    ChildMount m{op.kind, c->Keep(kNewRoot + path), nullptr, op.optional, op.id};
    if (op.kind == plan::MountOpKind::kBindWritable ||
        op.kind == plan::MountOpKind::kBindReadOnly) {
      m.source = c->Keep(kOldRoot + path);
    }
    if (op.kind == plan::MountOpKind::kMaskFile)
      m.source = c->Keep(std::string(kOldRoot) + "/dev/null");
    if (op.kind == plan::MountOpKind::kResolverConfig) m.source = c->Keep(kOldRoot + path);
    c->mounts.push_back(m);
  }
  for (const plan::PlaceholderCover& cover : plan::PlaceholderCovers(plan.placeholders)) {
    c->covers.push_back({c->Keep(kNewRoot + cover.path.native()), cover.directory, cover.pin});
  }
  if (std::string ignore = plan::PlaceholderGitIgnore(plan.placeholders);
      !ignore.empty() && !plan.home.empty()) {
    c->ignore_path = c->Keep(kNewRoot + (plan.home / plan::kPlaceholderGitIgnore).native());
    c->ignore_text = c->Keep(std::move(ignore));
  }

  c->cwd = c->Keep(plan.cwd.string());
  for (const std::string& arg : plan.argv) c->argv.push_back(c->Keep(arg));
  c->argv.push_back(nullptr);
  for (const std::string& entry : plan.env) c->envp.push_back(c->Keep(entry));
  c->envp.push_back(nullptr);
  for (std::string& candidate : ExecCandidates(plan.argv.front(), plan.env)) {
    c->exec_paths.push_back(c->Keep(std::move(candidate)));
  }

  c->landlock_abi = plan.landlock.abi;
  c->landlock_handled_fs = plan.landlock.handled_fs;
  c->landlock_handled_net = plan.landlock.handled_net;
  c->landlock_scoped = plan.landlock.scoped;
  for (const auto& path : plan.landlock.writable) {
    c->landlock_writable.push_back(c->Keep(path.string()));
  }
  for (const auto& path : plan.landlock.readable) {
    c->landlock_readable.push_back(c->Keep(path.string()));
  }
  c->landlock_list_root = plan.landlock.list_root;

  c->init_reaper_fd = InitReaperFdFor(plan);
  if (plan.namespaces.mount) {
    for (const plan::MountOp& op : plan.mounts) {
      if (op.kind == plan::MountOpKind::kTmpfs)
        c->private_tmpfs.push_back(c->Keep(op.path.native()));
    }
    c->private_tmpfs.push_back("/dev/shm");  // MountDev's
    if (!plan.home.empty()) {
      c->own_file = c->Keep((plan.home / plan::kPlaceholderGitIgnore).native());
    }
    if (c->private_tmpfs.size() > static_cast<std::size_t>(exec::kInitMaxPrivatePaths)) {
      c->private_tmpfs.resize(exec::kInitMaxPrivatePaths);
    }
  }
  c->rlimits = plan.limits.rlimits;
  c->seccomp = plan.seccomp.enabled;
  if (plan.seccomp.enabled) {
    CORDON_TRY(c->seccomp_program, BuildSeccompProgram(plan.seccomp));
  }
  return c;
}

}  // namespace cordon::linux_native
