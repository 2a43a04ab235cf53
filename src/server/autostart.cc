#include "server/autostart.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "server/peer.h"

namespace cordon::server {

Result<ServerUse> ParseServerUse(const std::optional<std::string>& setting) {
  if (!setting || setting->empty() || *setting == "auto") return ServerUse::kAuto;
  if (*setting == "use") return ServerUse::kUse;
  if (*setting == "off") return ServerUse::kOff;
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("CORDON_RUN_SERVER={}: expected auto, use or off", *setting));
}

void StartServerInBackground(const ServerPaths& paths) {
  // It would exit at once (Serve() checks the same).
  if (!CheckKernelNamesPeers()) return;
  struct stat st {};
  if (::stat(paths.directory.parent_path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  // The server would make it too; made here, a client racing this one finds it safe or not.
  if (!CheckDirectory(paths.directory, /*create=*/true)) return;
  // Everything the children need is ready before fork(): they only make system calls.
  const std::string idle = std::to_string(kAutoStartIdleTimeout.count());
  char* const argv[] = {const_cast<char*>("cordon"), const_cast<char*>("serve"),
                        const_cast<char*>("--idle-timeout"), const_cast<char*>(idle.c_str()),
                        nullptr};
  sigset_t none;
  ::sigemptyset(&none);
  const pid_t child = ::fork();
  if (child < 0) return;
  if (child == 0) {
    // Its own session, and re-parented at once (the middle process exits): no terminal's
    // signals reach it, and the caller has no child to wait for.
    ::setsid();
    if (::fork() != 0) ::_exit(0);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
    }
    // It must not keep a mount busy, or hold the caller's output open (its reader waits for
    // EOF).
    if (::chdir("/") != 0) ::_exit(127);
    // Not O_CLOEXEC: with the caller's stdin, stdout or stderr closed it lands on 0, 1 or 2,
    // where dup2 onto itself would leave the flag (and the server without that descriptor).
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(null, 2) < 0) {
      ::_exit(127);
    }
    // Every other descriptor: none of the caller's may live on in the server (a pipe whose
    // reader waits for EOF). Where close_range is denied (an old container profile), one by one.
    if (::close_range(3, ~0U, 0) != 0) {
      rlimit files{};
      if (::getrlimit(RLIMIT_NOFILE, &files) != 0) ::_exit(127);
      const rlim_t end = files.rlim_cur == RLIM_INFINITY ? 1 << 20 : files.rlim_cur;
      for (rlim_t fd = 3; fd < end; ++fd) ::close(static_cast<int>(fd));
    }
    ::execve("/proc/self/exe", argv, environ);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace cordon::server
