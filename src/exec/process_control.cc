#include "exec/process_control.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include <cerrno>
#include <string>

#include "core/syscall_error.h"

namespace cordon::exec {
namespace {

// From <linux/wait.h>; glibc 2.36's idtype_t does not name it yet.
constexpr int kPPidfd = 3;

// waitid on the pidfd when there is one (immune to pid reuse), else on the pid.
int WaitId(const LaunchedProcess& process, siginfo_t* info, int options) {
  if (process.pidfd.valid()) {
    return ::waitid(static_cast<idtype_t>(kPPidfd), static_cast<id_t>(process.pidfd.get()), info,
                    options);
  }
  return ::waitid(P_PID, static_cast<id_t>(process.pid), info, options);
}

std::string WaitArgs(const LaunchedProcess& process) {
  return process.pidfd.valid() ? "P_PIDFD, " + std::to_string(process.pidfd.get())
                               : "P_PID, " + std::to_string(process.pid);
}

// `signal` through a pidfd; false when that failed (or pidfds do not exist: not Linux).
bool PidfdSignal(int pidfd, int signal) {
#if defined(__linux__)
  return ::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0;
#else
  (void)pidfd;
  (void)signal;
  return false;
#endif
}

bool PidfdKill(int pidfd) { return PidfdSignal(pidfd, SIGKILL); }

}  // namespace

bool PidfdAlive(int pidfd) { return PidfdSignal(pidfd, 0); }

core::UniqueFd OpenPidfd(pid_t pid) {
#if defined(__linux__)
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return core::UniqueFd(fd < 0 ? -1 : static_cast<int>(fd));
#else
  (void)pid;
  return core::UniqueFd();  // no pidfds: the supervisor polls for the exit
#endif
}

void KillTree(const LaunchedProcess& process) {
  if (process.pid <= 0) return;
  // The group first: while the leader is unreaped its pgid cannot be recycled.
  if (process.kill_process_group) (void)::kill(-process.pid, SIGKILL);
  if (process.pidfd.valid() && PidfdKill(process.pidfd.get())) return;
  (void)::kill(process.pid, SIGKILL);
}

bool KillAndAwaitSandboxInit(const LaunchedProcess& process, int timeout_ms) {
  if (!process.sandbox_init_pidfd.valid()) return true;
  const int fd = process.sandbox_init_pidfd.get();
  (void)PidfdKill(fd);
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0;
  }
}

Result<bool> HasExited(const LaunchedProcess& process) {
  siginfo_t info{};
  for (;;) {
    if (WaitId(process, &info, WEXITED | WNOHANG | WNOWAIT) == 0) return info.si_pid != 0;
    if (errno != EINTR) {
      return core::FailSyscall("waitid", WaitArgs(process) + ", WEXITED|WNOHANG|WNOWAIT");
    }
  }
}

Result<ExitInfo> Reap(const LaunchedProcess& process) {
  siginfo_t info{};
  for (;;) {
    if (WaitId(process, &info, WEXITED) == 0) break;
    if (errno != EINTR) return core::FailSyscall("waitid", WaitArgs(process) + ", WEXITED");
  }
  ExitInfo exit;
  if (info.si_code == CLD_EXITED) {
    exit.code = info.si_status;
  } else {
    exit.signaled = true;
    exit.signal = info.si_status;
  }
  return exit;
}

ExitInfo DecodeWaitStatus(int status) {
  ExitInfo exit;
  if (WIFEXITED(status)) {
    exit.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.signaled = true;
    exit.signal = WTERMSIG(status);
  } else {
    // Stopped/continued statuses are never final; report them as the raw value so a broken
    // init is visible rather than mistaken for success.
    exit.code = status;
  }
  return exit;
}

}  // namespace cordon::exec
