// Everything the sandbox's child processes need, prepared in the parent before clone: between
// clone and execve the children may not allocate, throw or log (the parent may be threaded and
// the child is a copy of it with one thread), so every path is a ready C string, every array
// a ready vector, and the seccomp program is already compiled to BPF.
//
// Ownership: a ChildContext owns its strings (`strings_`); the pointers in it stay valid as long
// as the context lives and is not modified. Descriptors are borrowed (owned by the launcher).
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "limits/cgroup.h"
#include "limits/resource_limits.h"
#include "plan/launch_plan.h"

namespace cordon::linux_native {

// Where the mount view is built: the staging tmpfs is mounted on kStagingMountPoint, becomes
// the root for a moment, and holds the new root and the host's old root side by side.
inline constexpr const char* kStagingMountPoint = "/tmp";
inline constexpr const char* kNewRoot = "/newroot";
inline constexpr const char* kOldRoot = "/oldroot";

struct ChildMount {
  plan::MountOpKind kind;
  const char* target;  // kNewRoot + path
  const char* source;  // kOldRoot + path (binds from the host), else nullptr
  bool optional;       // plan::MountOp::optional: skipped when the target is gone
  // Binds: the source as planned (plan::MountOp::id). The bind fails with ESTALE when another
  // directory or file is at the path now ({0, 0}: not checked).
  plan::FileId id;
};

// A placeholder to cover (linux/placeholder_cover.h), after the mount view is built.
struct ChildCover {
  const char* path;  // kNewRoot + path in the one-shot view; the path itself in a joined one
  bool directory;
  bool pin = false;  // a placeholder's parent: bound onto itself writable (PinDirectoryAt)
};

struct ChildContext {
  unsigned long clone_flags = 0;
  plan::Namespaces namespaces;

  // Descriptors (borrowed). error_fd: the report pipe's write end (close-on-exec, >= 3).
  // alive_fd: read end of a pipe whose write end only the parent holds (POLLHUP = parent gone).
  // status_fd: write end of the pipe where init writes the command's wait status.
  int error_fd = -1;
  int alive_fd = -1;
  int status_fd = -1;
  int stdio[3] = {-1, -1, -1};
  // One end of a socketpair: the command sends its seccomp listener there (SCM_RIGHTS) before
  // execve, when connects are brokered (docs/decisions/0019); -1 otherwise.
  int connect_broker_fd = -1;
  // Network by domain (plan.domains): before the listener, the command process sends there a
  // UDP socket it bound to 127.0.0.1:53 while it still held its capabilities (resolver_socket.h).
  bool resolver_socket = false;
  // cordon-init (init_reaper.h), which init execs once the command has started; -1 (no usable
  // reaper, or a plan without namespaces): init waits for the command itself.
  int init_reaper_fd = -1;
  // A prepared command (docs/decisions/0023): the command process's end of the request socket.
  // Once every layer is in force it execs cordon-init --exec on it (through init_reaper_fd)
  // instead of the command, which the supervisor sends later. -1: exec the command.
  int request_fd = -1;

  // The command's stack (ChildStacks::command_top, mapped by the parent): init creates the
  // command with CLONE_VM|CLONE_VFORK on it, so the command never copies init's page tables
  // (a copy of the supervisor's until init execs). nullptr: a fork-like clone.
  char* command_stack_top = nullptr;
  // init itself runs in the supervisor's address space (CLONE_VM|CLONE_VFORK; the supervisor
  // waits until init execs cordon-init). Then init may not fall back to reaping in place.
  bool init_shares_parent_memory = false;
  // init's stack (ChildStacks::init_top) when a relay makes init in the supervisor's memory (a
  // zygote's joiner, with init_shares_parent_memory); nullptr otherwise.
  char* init_stack_top = nullptr;
  // The mount view outlives this command (a zygote's holder builds it for the session's later
  // commands): a mask whose target cannot be looked up now is still required, since a chmod on
  // the host could make it reachable while the view lives. One command's own view skips such
  // a mask (mount_view.cc).
  bool view_reused = false;

  const char* uid_map = nullptr;  // "U U 1\n": the caller's ids map to themselves
  const char* gid_map = nullptr;
  const char* hostname = nullptr;
  std::vector<ChildMount> mounts;
  std::vector<ChildCover> covers;  // plan.placeholders
  // With covers: git's ignore file in the private HOME (kNewRoot + path) and its text
  // (plan::PlaceholderGitIgnore); nullptr when none is written.
  const char* ignore_path = nullptr;
  const char* ignore_text = nullptr;

  const char* cwd = nullptr;
  std::vector<const char*> argv;        // nullptr-terminated
  std::vector<const char*> envp;        // nullptr-terminated
  std::vector<const char*> exec_paths;  // candidates for argv[0] in PATH order

  int landlock_abi = 0;
  std::uint64_t landlock_handled_fs = 0;
  std::uint64_t landlock_handled_net = 0;
  std::uint64_t landlock_scoped = 0;
  std::vector<const char*> landlock_writable;
  std::vector<const char*> landlock_readable;  // read rights beneath, opened with O_NOFOLLOW
  bool landlock_list_root = false;             // READ_DIR beneath "/"

  // Without a mount namespace: the host directory holding the private HOME and TMPDIR, which
  // init removes after the command (nullptr with a mount namespace: the tmpfs vanishes).
  const char* private_dir = nullptr;
  // With one: the private tmpfs mounts (the plan's scratch /tmp or TMPDIR, /var/tmp, and
  // /dev/shm), which cordon-init measures once the command ended (exec/init_report.h).
  std::vector<const char*> private_tmpfs;
  // cordon's own file among them (git's ignore file in the private HOME, which a prepared view
  // gets only once the command is known): never counted as the command's.
  const char* own_file = nullptr;

  bool seccomp = false;
  std::vector<sock_filter> seccomp_program;

  // Resource limits (plan.limits): the run's cgroup, which the command process joins before
  // anything else (borrowed descriptors, -1: none), and its rlimits.
  limits::CgroupAttach cgroup;
  limits::ResourceLimits rlimits;

  // Keeps the strings above alive; a deque never moves its elements.
  std::deque<std::string> strings_;
  const char* Keep(std::string s) { return strings_.emplace_back(std::move(s)).c_str(); }
};

// argv[0]'s candidates in execvp's order: itself when it has a slash, else each directory of
// the PATH in `env` (the plan's environment; /usr/bin:/bin without one).
std::vector<std::string> ExecCandidates(const std::string& program,
                                        const std::vector<std::string>& env);

// Builds the context for `plan` (strings, exec candidates, compiled seccomp program). The
// descriptors are filled in by the launcher once its pipes exist.
[[nodiscard]] Result<std::unique_ptr<ChildContext>> PrepareChildContext(
    const plan::LaunchPlan& plan, const exec::StdioFds& stdio);

}  // namespace cordon::linux_native
