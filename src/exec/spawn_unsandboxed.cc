#include "exec/spawn_unsandboxed.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "core/syscall_error.h"
#include "exec/process_control.h"
#include "limits/resource_limits.h"

namespace cordon::exec {
namespace {

// The child's steps, in order; a failing step is reported to the parent as {step, errno}.
enum class Step : int { kCgroup, kSetsid, kDeathSignal, kStdio, kCloseFds, kChdir, kRlimit, kExec };

struct ChildFailure {
  int step;
  int err;
  int detail;  // kRlimit: the RLIMIT_* resource
};

// Everything the child needs, prepared in the parent: between fork and exec the child may not
// allocate (another thread may have held the malloc lock at fork time).
struct ChildArgs {
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<std::string> candidates;  // executables to try, in PATH order
  std::vector<const char*> candidate_ptrs;
  const char* cwd = nullptr;
  int stdio[3] = {-1, -1, -1};
  pid_t parent = 0;
  rlim_t max_fd = 1024;  // fallback bound when close_range is unavailable
  limits::CgroupAttach cgroup;
  limits::ResourceLimits rlimits;
};

const char* StepName(Step step) {
  switch (step) {
    case Step::kCgroup:
      return "write(cgroup.procs)";
    case Step::kRlimit:
      return "setrlimit";
    case Step::kSetsid:
      return "setsid";
    case Step::kDeathSignal:
      return "prctl(PR_SET_PDEATHSIG)";
    case Step::kStdio:
      return "dup2(stdio)";
    case Step::kCloseFds:
      return "close_range(3..)";
    case Step::kChdir:
      return "chdir";
    case Step::kExec:
      return "execve";
  }
  return "unknown step";
}

std::string_view EnvValue(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return std::string_view(entry).substr(name.size() + 1);
    }
  }
  return {};
}

// execvp's search, but over the command's PATH rather than the caller's.
std::vector<std::string> ExecCandidates(const std::string& file,
                                        const std::vector<std::string>& env) {
  if (file.find('/') != std::string::npos) return {file};
  std::string_view path = EnvValue(env, "PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> out;
  while (true) {
    const std::size_t colon = path.find(':');
    std::string_view dir = path.substr(0, colon);
    out.push_back(dir.empty() ? file : fmt::format("{}/{}", dir, file));  // "" is the cwd
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return out;
}

[[noreturn]] void ReportAndExit(int fd, Step step, int err, int detail = -1) {
  const ChildFailure failure{static_cast<int>(step), err, detail};
  while (::write(fd, &failure, sizeof failure) < 0 && errno == EINTR) {
  }
  ::_exit(127);
}

// Runs in the forked child: async-signal-safe calls only.
[[noreturn]] void ChildMain(const ChildArgs& args, int error_fd) {
  // Handlers installed by the caller must not run here, and SIG_IGN would survive exec (a
  // command with SIGPIPE ignored behaves differently in pipelines).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) (void)::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  (void)::sigprocmask(SIG_SETMASK, &none, nullptr);

  // The run's cgroup before anything can fork: every process of the command is born inside.
  if (const int err = limits::AttachSelf(args.cgroup); err != 0) {
    ReportAndExit(error_fd, Step::kCgroup, err);
  }

  // A new session: own process group (the supervisor kills -pgid) and no controlling terminal.
  if (::setsid() < 0) ReportAndExit(error_fd, Step::kSetsid, errno);
#if defined(__linux__)
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ReportAndExit(error_fd, Step::kDeathSignal, errno);
#endif
  // Linux: the supervisor died before prctl. Elsewhere (no parent-death signal): before here.
  if (::getppid() != args.parent) ::_exit(127);

  // Move the sources above 2 first, so dup2 onto 0..2 cannot clobber a source that is itself
  // 0..2 (and dup2 clears FD_CLOEXEC on the targets).
  int high[3];
  for (int i = 0; i < 3; ++i) {
    high[i] = ::fcntl(args.stdio[i], F_DUPFD_CLOEXEC, 3);
    if (high[i] < 0) ReportAndExit(error_fd, Step::kStdio, errno);
  }
  for (int i = 0; i < 3; ++i) {
    if (::dup2(high[i], i) < 0) ReportAndExit(error_fd, Step::kStdio, errno);
  }

  // Mark (not close) everything above 2 close-on-exec: the error pipe must stay open until
  // execve succeeds. Nothing the caller holds may reach the command.
#if defined(__linux__)
  const bool marked = ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0;
#else
  const bool marked = false;  // macOS has no close_range
#endif
  if (!marked) {
    for (rlim_t fd = 3; fd < args.max_fd; ++fd)
      (void)::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  }

  if (::chdir(args.cwd) != 0) ReportAndExit(error_fd, Step::kChdir, errno);
  if (const limits::RlimitResult r = limits::ApplyResourceLimits(args.rlimits); !r.ok()) {
    ReportAndExit(error_fd, Step::kRlimit, r.err, r.resource);
  }

  int err = ENOENT;
  for (const char* candidate : args.candidate_ptrs) {
    ::execve(candidate, args.argv.data(), args.envp.data());
    // Like execvp: a directory without the file is not an error, a permission problem is
    // remembered in case no later directory has the file.
    if (errno == EACCES || err != EACCES) err = errno;
    if (errno != ENOENT && errno != ENOTDIR && errno != EACCES) break;
  }
  ReportAndExit(error_fd, Step::kExec, err);
}

std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

Error ChildError(const ChildFailure& failure, const plan::LaunchPlan& plan) {
  const auto step = static_cast<Step>(failure.step);
  std::string args;
  if (step == Step::kChdir) args = plan.cwd.string();
  if (step == Step::kExec) args = plan.argv.front();
  if (step == Step::kRlimit) args = limits::RlimitName(failure.detail);
  Error error = core::SyscallError(StepName(step), args, failure.err);
  if (step == Step::kExec &&
      (failure.err == ENOENT || failure.err == ENOTDIR || failure.err == EACCES)) {
    error.code = ErrorCode::kCommandNotFound;
  }
  return error;
}

}  // namespace

Result<LaunchedProcess> SpawnUnsandboxed(const plan::LaunchPlan& plan, const StdioFds& stdio,
                                         const limits::CgroupAttach& cgroup) {
  if (plan.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "spawn: empty argv");
  if (stdio.stdin_fd < 0 || stdio.stdout_fd < 0 || stdio.stderr_fd < 0) {
    return Fail(ErrorCode::kInvalidArgument, "spawn: stdin, stdout and stderr must all be set");
  }

  ChildArgs args;
  args.argv = Pointers(plan.argv);
  args.envp = Pointers(plan.env);
  args.candidates = ExecCandidates(plan.argv.front(), plan.env);
  for (const std::string& c : args.candidates) args.candidate_ptrs.push_back(c.c_str());
  const std::string cwd = plan.cwd.empty() ? plan.workspace.string() : plan.cwd.string();
  args.cwd = cwd.c_str();
  args.stdio[0] = stdio.stdin_fd;
  args.stdio[1] = stdio.stdout_fd;
  args.stdio[2] = stdio.stderr_fd;
  args.parent = ::getpid();
  args.cgroup = cgroup;
  args.rlimits = plan.limits.rlimits;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    args.max_fd = limit.rlim_cur;
  }

  int error_pipe[2];
#if defined(__linux__)
  if (::pipe2(error_pipe, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", "spawn error pipe");
#else
  // No pipe2 on macOS: a descriptor another thread's fork+exec inherits in this window holds
  // only this pipe, which it cannot use to reach the command.
  if (::pipe(error_pipe) != 0) return core::FailSyscall("pipe", "spawn error pipe");
  (void)::fcntl(error_pipe[0], F_SETFD, FD_CLOEXEC);
  (void)::fcntl(error_pipe[1], F_SETFD, FD_CLOEXEC);
#endif
  core::UniqueFd error_read(error_pipe[0]);
  core::UniqueFd error_write(error_pipe[1]);

  // Block every signal across fork so no caller handler runs in the child before it resets
  // the dispositions; the parent thread's mask is restored right after.
  sigset_t all, saved;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = ::fork();
  if (pid == 0) ChildMain(args, error_write.get());
  const int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) return core::FailSyscall("fork", plan.argv.front(), fork_errno);
  error_write.Reset();

  ChildFailure failure{};
  ssize_t n;
  do {
    n = ::read(error_read.get(), &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  if (n != 0) {
    // The child failed before exec (or the pipe broke): it is exiting; reap it.
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof failure))
      return std::unexpected(ChildError(failure, plan));
    return Fail(ErrorCode::kInternal, "spawn: short read on the child's error pipe");
  }

  LaunchedProcess process;
  process.pid = pid;
  process.pidfd = OpenPidfd(pid);
  process.kill_process_group = true;
  return process;
}

}  // namespace cordon::exec
