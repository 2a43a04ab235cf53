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
#include "exec/init_report.h"
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

// Whether `name` is a process id other than 1 (this init).
bool IsOtherPid(const char* name) {
  if (name[0] < '1' || name[0] > '9' || (name[0] == '1' && name[1] == '\0')) return false;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return true;
}

// The processes of this PID namespace still running (not zombies) besides init, and the names
// of the first few, from its own /proc: the tree that dies when init exits.
void CountLeftRunning(cordon::exec::InitReport& report) {
  const long proc = OpenAt(AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) {
    report.left_running = -1;
    return;
  }
  long used = 0;
  alignas(8) char entries[2048];
  for (long n; (n = Getdents64(static_cast<int>(proc), entries, sizeof entries)) > 0;) {
    for (long at = 0; at < n;) {
      unsigned short length = 0;
      __builtin_memcpy(&length, entries + at + 16, sizeof length);  // linux_dirent64.d_reclen
      const char* name = entries + at + 19;                         // d_name
      at += length;
      if (length == 0) break;
      if (!IsOtherPid(name)) continue;
      // /proc/PID/stat: "PID (COMM) STATE ..."; COMM may hold ") ".
      char path[32] = "/proc/";
      unsigned p = 6;
      for (const char* c = name; *c != '\0' && p < sizeof path - 6; ++c) path[p++] = *c;
      const char tail[] = "/stat";
      for (unsigned i = 0; i < sizeof tail; ++i) path[p++] = tail[i];
      char stat[128];
      const long fd = OpenAt(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;  // gone meanwhile
      const long got = Read(static_cast<int>(fd), stat, sizeof stat - 1);
      Close(static_cast<int>(fd));
      if (got <= 0) continue;
      long open = -1;
      long close = -1;
      for (long i = 0; i < got; ++i) {
        if (stat[i] == '(' && open < 0) open = i;
        if (stat[i] == ')') close = i;
      }
      if (open < 0 || close < open || close + 2 >= got || stat[close + 2] == 'Z') continue;
      ++report.left_running;
      const long comm = close - open - 1;
      if (used + comm + 1 > static_cast<long>(sizeof report.names)) continue;
      for (long i = 0; i < comm; ++i) report.names[used++] = stat[open + 1 + i];
      report.names[used++] = '\0';
    }
  }
  Close(static_cast<int>(proc));
}

// What the command left in the private tmpfs mounts named by `paths` (used blocks of each;
// anything that is not a tmpfs, such as a workspace bound over /var/tmp, is not counted),
// beyond the `baseline` they held when it started.
unsigned long long DiscardedBytes(long baseline, const char* own_file, char** paths, int count) {
  unsigned long long total = 0;
  for (int i = 0; i < count; ++i) {
    StatFs fs{};
    if (Statfs(paths[i], &fs) != 0 || fs.type != kTmpfsMagic || fs.blocks < fs.blocks_free) {
      continue;
    }
    total += static_cast<unsigned long long>(fs.blocks - fs.blocks_free) *
             static_cast<unsigned long long>(fs.block_size);
  }
  // cordon's own file (git's ignore file in HOME) is not the command's.
  struct statx own {};
  if (own_file[0] == '/' && Statx(AT_FDCWD, own_file, AT_SYMLINK_NOFOLLOW, &own) == 0 &&
      (own.stx_mode & S_IFMT) == S_IFREG) {
    const auto blocks = static_cast<unsigned long long>(own.stx_blocks) * 512;
    total = total > blocks ? total - blocks : 0;
  }
  const auto before = static_cast<unsigned long long>(baseline < 0 ? 0 : baseline);
  return total > before ? total - before : 0;
}

[[noreturn]] void Reap(int argc, char** argv) {
  if (argc == 3 && IsExecFlag(argv[1])) {
    const long request_fd = ParseNumber(argv[2]);
    if (request_fd < 3) Exit(126);
    cordon::linux_native::RunExecStub(static_cast<int>(request_fd));
  }
  // exec made this process dumpable again; the command must not be able to read or trace it.
  if (Prctl(kPrSetDumpable, 0) != 0) Exit(126);
  if (argc < 3 || argc == 4 || argc > 5 + cordon::exec::kInitMaxPrivatePaths) Exit(126);
  const long status_fd = ParseNumber(argv[1]);
  const long command = ParseNumber(argv[2]);
  if (status_fd < 3 || command < 2) Exit(126);
  for (;;) {
    int status = 0;
    const long pid = Wait4(-1, &status);
    if (pid == command) {
      cordon::exec::InitReport report{};
      report.wait_status = status;
      CountLeftRunning(report);
      if (argc > 5)
        report.discarded_bytes = DiscardedBytes(ParseNumber(argv[3]), argv[4], argv + 5, argc - 5);
      (void)Write(static_cast<int>(status_fd), &report, sizeof report);
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
