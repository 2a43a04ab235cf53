// cordon-init: what the sandbox's PID 1 becomes once the command has started
// (docs/decisions/0021-init-reaper.md).
//
//   cordon-init STATUS_FD COMMAND_PID
//   cordon-init --exec REQUEST_FD      (a prepared command process: linux/exec_stub.h)
//
// The sandbox's init is a fork of the supervisor: until it execs, it shares every page of the
// supervisor's memory copy-on-write (each page the supervisor then writes is copied, with a TLB
// shoot-down, for as long as the command runs) and holds a copy of that memory — the caller's
// environment, the server's state — inside the sandbox. Exec'ing this small static program
// drops both. It does what init's tail did: reap every process of the PID namespace, and when
// COMMAND_PID ends, write its wait status (one int) to STATUS_FD and exit, which kills whatever
// is left in the namespace.
//
// Only libc, no allocation: it runs as PID 1 with the sandbox's capabilities in its user
// namespace (never handed to the command, which drops them).
#include <errno.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "linux/exec_stub.h"

namespace {

// A decimal number without sign, leading "+" or trailing text; -1 otherwise.
long ParseNumber(const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  long value = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || value > 100000000) return -1;
    value = value * 10 + (*p - '0');
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--exec") == 0) {
    const long request_fd = ParseNumber(argv[2]);
    if (request_fd < 3) return 126;
    cordon::linux_native::RunExecStub(static_cast<int>(request_fd));
  }
  // exec made this process dumpable again; the command must not be able to read or trace it.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return 126;
  if (argc != 3) return 126;
  const long status_fd = ParseNumber(argv[1]);
  const long command = ParseNumber(argv[2]);
  if (status_fd < 3 || command < 2) return 126;
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid == static_cast<pid_t>(command)) {
      (void)!::write(static_cast<int>(status_fd), &status, sizeof status);
      return 0;
    }
    if (pid < 0 && errno != EINTR) return 126;  // ECHILD: the command was not our child
  }
}
