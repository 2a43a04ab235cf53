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
// No C library (nolibc/sys.h, decision 0028: its execve is two per prepared command, and glibc's
// start-up alone cost more than the rest), no allocation: it runs as PID 1 with the sandbox's
// capabilities in its user namespace (never handed to the command, which drops them).
#include "linux/exec_stub.h"
#include "nolibc/sys.h"

namespace {

using namespace cordon::nolibc;  // NOLINT: the system calls

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

bool IsExecFlag(const char* text) {
  const char flag[] = "--exec";
  for (unsigned i = 0; i < sizeof flag; ++i) {
    if (text[i] != flag[i]) return false;
  }
  return true;
}

[[noreturn]] void Reap(int argc, char** argv) {
  if (argc == 3 && IsExecFlag(argv[1])) {
    const long request_fd = ParseNumber(argv[2]);
    if (request_fd < 3) Exit(126);
    cordon::linux_native::RunExecStub(static_cast<int>(request_fd));
  }
  // exec made this process dumpable again; the command must not be able to read or trace it.
  if (Prctl(kPrSetDumpable, 0) != 0) Exit(126);
  if (argc != 3) Exit(126);
  const long status_fd = ParseNumber(argv[1]);
  const long command = ParseNumber(argv[2]);
  if (status_fd < 3 || command < 2) Exit(126);
  for (;;) {
    int status = 0;
    const long pid = Wait4(-1, &status);
    if (pid == command) {
      (void)Write(static_cast<int>(status_fd), &status, sizeof status);
      Exit(0);
    }
    if (pid < 0 && pid != -kEintr) Exit(126);  // ECHILD: the command was not our child
  }
}

}  // namespace

extern "C" [[noreturn]] void NolibcMain(long* stack) {
  Reap(static_cast<int>(stack[0]), reinterpret_cast<char**>(stack + 1));
}

CORDON_NOLIBC_START;
