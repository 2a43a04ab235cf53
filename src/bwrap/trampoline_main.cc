// cordon-bwrap-exec: runs inside bubblewrap's sandbox, after bwrap built the namespaces and the
// mount view, and applies what bwrap cannot: Landlock (the second layer on writes and TCP) and
// cordon's seccomp filter, then execs the command. Its options come from LaunchBwrap only:
//
//   cordon-bwrap-exec [--landlock ABI FS NET SCOPED] [--writable PATH]... [--readable PATH]...
//                     [--list-root] [--seccomp [--broker]] -- ARGV...
//
// Descriptors: see trampoline_protocol.h. Any failure is reported on the report pipe; the
// command never runs with a layer missing. The command runs as the trampoline's child; the
// trampoline waits and writes the command's wait status to kStatusFd.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "bwrap/trampoline_protocol.h"
#include "linux/child_context.h"
#include "linux/error_pipe.h"
#include "linux/landlock_ruleset.h"
#include "linux/seccomp_filter.h"
#include "linux/system_headers/syscalls.h"

namespace {

using cordon::linux_native::Step;
using cordon::linux_native::StepFailed;
using cordon::linux_native::StepResult;
namespace bw = cordon::bwrap;

void Require(const StepResult& r) {
  if (r.failed()) cordon::linux_native::ReportAndExit(bw::kReportFd, r);
}
void Require(bool ok, Step step) {
  if (!ok) cordon::linux_native::ReportAndExit(bw::kReportFd, StepFailed(step));
}

std::uint64_t Number(const char* text) { return std::strtoull(text, nullptr, 0); }

// The BPF program from the memfd: at most 64 Ki instructions (the kernel's limit is 4096).
bool ReadProgram(std::vector<sock_filter>& program) {
  struct stat st {};
  if (::fstat(bw::kSeccompFd, &st) != 0) return false;
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0 || size % sizeof(sock_filter) != 0 || size > 65536 * sizeof(sock_filter)) {
    errno = EINVAL;
    return false;
  }
  program.resize(size / sizeof(sock_filter));
  auto* bytes = reinterpret_cast<char*>(program.data());
  for (std::size_t done = 0; done < size;) {
    ssize_t n = ::pread(bw::kSeccompFd, bytes + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // The report pipe must close on exec: EOF after the start byte is the parent's "it runs".
  if (::fcntl(bw::kReportFd, F_SETFD, FD_CLOEXEC) != 0) return 125;
  if (::fcntl(bw::kStatusFd, F_SETFD, FD_CLOEXEC) != 0) return 125;  // never the command's
  if (::write(bw::kReportFd, &bw::kStartedByte, 1) != 1) return 125;
  ::close(bw::kInfoFd);  // bwrap's info pipe, should it have passed it on: not the command's
  // The bind sources bwrap received (--bind-fd): host directories, never the command's.
  if (cordon::linux_native::sys::CloseRange(bw::kFirstFreeFd, ~0U, 0) != 0) return 125;

  cordon::linux_native::ChildContext c;
  bool seccomp = false;
  bool broker = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--landlock" && i + 4 < argc) {
      c.landlock_abi = static_cast<int>(Number(argv[i + 1]));
      c.landlock_handled_fs = Number(argv[i + 2]);
      c.landlock_handled_net = Number(argv[i + 3]);
      c.landlock_scoped = Number(argv[i + 4]);
      i += 4;
    } else if (arg == "--writable" && i + 1 < argc) {
      c.landlock_writable.push_back(argv[++i]);
    } else if (arg == "--readable" && i + 1 < argc) {
      c.landlock_readable.push_back(argv[++i]);
    } else if (arg == "--list-root") {
      c.landlock_list_root = true;
    } else if (arg == "--seccomp") {
      seccomp = true;
    } else if (arg == "--broker") {
      broker = true;
    } else {
      errno = EINVAL;
      Require(false, Step::kExecve);
    }
  }
  if (i >= argc) {
    errno = EINVAL;
    Require(false, Step::kExecve);
  }
  // The command's stderr onto 2; bwrap's own (the parent's memfd) is no business of the command.
  Require(::dup2(bw::kCommandStderrFd, STDERR_FILENO) == STDERR_FILENO, Step::kStdio);
  std::vector<sock_filter> program;
  if (seccomp) Require(ReadProgram(program), Step::kSeccomp);
  ::close(bw::kCommandStderrFd);
  ::close(bw::kSeccompFd);
  // Same order as the native backend's RunCommand: no_new_privs, Landlock, seccomp last.
  Require(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, Step::kNoNewPrivs);
  Require(cordon::linux_native::ApplyLandlock(c));
  // With --broker the listener goes to the supervisor on kBrokerFd, and both are closed here.
  if (seccomp) {
    Require(cordon::linux_native::InstallSeccomp(program, broker ? bw::kBrokerFd : -1));
  }
  if (!broker || !seccomp) ::close(bw::kBrokerFd);
  // The command runs as the trampoline's child, under every layer already applied here, so
  // that its exact wait status (a death by signal included) reaches the supervisor.
  const pid_t child = ::fork();
  Require(child >= 0, Step::kExecve);
  if (child == 0) {
    ::execvp(argv[i], argv + i);
    Require(false, Step::kExecve);
  }
  ::close(bw::kReportFd);  // the child's copy closes on its execve: EOF means it runs
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 125;
  }
  (void)!::write(bw::kStatusFd, &status, sizeof status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
