#include "bwrap/launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bwrap/argv.h"
#include "bwrap/bind_sources.h"
#include "bwrap/trampoline_protocol.h"
#include "core/paths.h"
#include "core/syscall_error.h"
#include "linux/child_steps.h"
#include "linux/error_pipe.h"
#include "linux/launcher.h"
#include "linux/seccomp_filter.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::bwrap {
namespace {

using core::UniqueFd;

constexpr const char* kTrampolineName = "cordon-bwrap-exec";

// The trampoline's options: Landlock rules as numbers and paths, seccomp from the memfd.
std::vector<std::string> TrampolineWords(const plan::LaunchPlan& plan) {
  std::vector<std::string> words{kTrampolineInSandbox};
  if (plan.landlock.abi > 0) {
    words.insert(
        words.end(),
        {"--landlock", std::to_string(plan.landlock.abi), std::to_string(plan.landlock.handled_fs),
         std::to_string(plan.landlock.handled_net), std::to_string(plan.landlock.scoped)});
    for (const auto& path : plan.landlock.writable) {
      words.emplace_back("--writable");
      words.push_back(path.string());
    }
    for (const auto& path : plan.landlock.readable) {
      words.emplace_back("--readable");
      words.push_back(path.string());
    }
    if (plan.landlock.list_root) words.emplace_back("--list-root");
  }
  if (plan.seccomp.enabled) words.emplace_back("--seccomp");
  if (plan.seccomp.enabled && plan.seccomp.broker_connect) words.emplace_back("--broker");
  words.emplace_back("--");
  return words;
}

Result<UniqueFd> MemFd(const char* name) {
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC));
  if (!fd) return core::FailSyscall("memfd_create", name);
  return fd;
}

Result<UniqueFd> SeccompMemFd(const plan::LaunchPlan& plan) {
  CORDON_TRY(UniqueFd fd, MemFd("cordon-seccomp"));
  if (!plan.seccomp.enabled) return fd;
  // The trampoline loads it; with broker_connect it sends the listener back (kBrokerFd).
  CORDON_TRY(std::vector<sock_filter> program, linux_native::BuildSeccompProgram(plan.seccomp));
  const auto* bytes = reinterpret_cast<const char*>(program.data());
  const std::size_t size = program.size() * sizeof(sock_filter);
  for (std::size_t done = 0; done < size;) {
    ssize_t n = ::write(fd.get(), bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return core::FailSyscall("write", "seccomp program memfd");
    done += static_cast<std::size_t>(n);
  }
  return fd;
}

// What bwrap printed on its stderr (a memfd), for the error message; at most 2 KiB.
std::string BwrapMessage(int memfd) {
  char buffer[2048];
  ssize_t n = ::pread(memfd, buffer, sizeof buffer - 1, 0);
  std::string text(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text.empty() ? "no message" : text;
}

// The pidfd of the sandbox's init from bwrap's --info-fd JSON (`"child-pid": N`), read until
// the object closes or bwrap closes the pipe. Invalid when there is none.
UniqueFd OpenSandboxInit(int info_fd) {
  std::string json;
  char buffer[256];
  while (json.find('}') == std::string::npos && json.size() < 4096) {
    ssize_t n = ::read(info_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    json.append(buffer, static_cast<std::size_t>(n));
  }
  constexpr std::string_view kKey = "\"child-pid\":";
  const std::size_t at = json.find(kKey);
  if (at == std::string::npos) return UniqueFd();
  const char* begin = json.c_str() + at + kKey.size();
  while (*begin == ' ') ++begin;
  pid_t init = 0;
  auto [end, ec] = std::from_chars(begin, json.c_str() + json.size(), init);
  if (ec != std::errc{} || end == begin || init <= 0) return UniqueFd();
  return UniqueFd(linux_native::sys::PidfdOpen(init, 0));
}

// Child: descriptors onto their protocol numbers, then exec bwrap. Only async-signal-safe calls:
// the parent may be threaded (the MCP server).
// The bind sources (bind_sources.h) follow on kFirstFreeFd + i; `scratch` holds as many ints
// (allocated before the fork).
[[noreturn]] void ExecBwrap(const char* bwrap, char* const* argv, const int (&fds)[kFirstFreeFd],
                            const int* sources, int* scratch, int source_count, pid_t parent) {
  // The caller's signal dispositions and this thread's mask are not the command's: a caller
  // that ignores SIGPIPE (Python does) or a thread that blocks signals would pass that on
  // through bwrap to everything the command starts. Default and unblocked, as cordon-init does.
  if (!linux_native::ResetSignals()) ::_exit(125);
  // Die with cordon (bwrap's --die-with-parent then takes the sandbox down with it), and not
  // at all if cordon is already gone.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != parent) ::_exit(125);
  const int total = kFirstFreeFd + source_count;
  // Above every target first, so that no dup2 clobbers a source.
  auto high = [&](int fd) {
    return fd < 0 ? ::fcntl(::open("/dev/null", O_RDWR | O_CLOEXEC), F_DUPFD_CLOEXEC, total)
                  : ::fcntl(fd, F_DUPFD_CLOEXEC, total);
  };
  int moved[kFirstFreeFd];
  for (int i = 0; i < kFirstFreeFd; ++i) {
    moved[i] = high(fds[i]);
    if (moved[i] < 0) ::_exit(125);
  }
  for (int i = 0; i < source_count; ++i) {
    scratch[i] = high(sources[i]);
    if (scratch[i] < 0) ::_exit(125);
  }
  for (int i = 0; i < kFirstFreeFd; ++i) {
    if (::dup2(moved[i], i) != i) ::_exit(125);  // clears close-on-exec
  }
  for (int i = 0; i < source_count; ++i) {
    if (::dup2(scratch[i], kFirstFreeFd + i) != kFirstFreeFd + i) ::_exit(125);
  }
  if (linux_native::sys::CloseRange(static_cast<unsigned>(total), ~0U, 0) != 0) ::_exit(125);
  char* envp[] = {nullptr};
  ::execve(bwrap, argv, envp);
  ::_exit(125);
}

}  // namespace

Result<std::filesystem::path> LocateTrampoline(
    const std::vector<std::filesystem::path>& writable_roots,
    const std::filesystem::path& preferred) {
  if (!preferred.empty()) {
    Result<std::filesystem::path> canonical = core::Canonical(preferred);
    if (!canonical || ::access(canonical->c_str(), X_OK) != 0) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("bwrap backend: the trampoline {} is missing or not executable "
                              "(build or install cordon-bwrap-exec)",
                              preferred.string()));
    }
    CORDON_TRY_VOID(CheckTrustedPath(*canonical, ::getuid(), writable_roots));
    return *canonical;
  }
  CORDON_TRY(std::filesystem::path self, core::Canonical("/proc/self/exe"));
  const std::filesystem::path dir = self.parent_path();
  for (const std::filesystem::path& candidate :
       {dir / kTrampolineName, dir.parent_path() / "libexec/cordon" / kTrampolineName,
        dir.parent_path() / "bwrap" / kTrampolineName}) {
    Result<std::filesystem::path> canonical = core::Canonical(candidate);
    if (!canonical || ::access(canonical->c_str(), X_OK) != 0) continue;
    CORDON_TRY_VOID(CheckTrustedPath(*canonical, ::getuid(), writable_roots));
    return *canonical;
  }
  return Fail(ErrorCode::kUnavailable,
              fmt::format("bwrap backend: {} not found next to {} or in {}/libexec/cordon "
                          "(reinstall cordon)",
                          kTrampolineName, self.string(), dir.parent_path().string()));
}

namespace {

bool VanishedOptional(const plan::MountOp& op) {
  struct stat st {};
  return op.optional && ::lstat(op.path.c_str(), &st) != 0;
}

// One bwrap start. `bwrap_failed`: bwrap's own setup failed, before the trampoline ran (so
// nothing of the command started).
Result<exec::LaunchedProcess> LaunchAttempt(const plan::LaunchPlan& plan,
                                            const exec::StdioFds& stdio, const BwrapBinary& bwrap,
                                            const std::filesystem::path& trampoline,
                                            bool& bwrap_failed) {
  BwrapInvocation how;
  how.bwrap = bwrap.path.string();
  how.trampoline = TrampolineWords(plan);
  how.extra_ro_binds = {{trampoline.string(), kTrampolineInSandbox}};
  how.info_fd = kInfoFd;
  CORDON_TRY(BindSources sources, OpenBindSources(plan, kFirstFreeFd));
  how.bind_fds = sources.numbers;
  std::vector<int> source_fds;
  for (const UniqueFd& fd : sources.fds) source_fds.push_back(fd.get());
  std::vector<int> scratch(source_fds.size());
  CORDON_TRY(std::vector<std::string> words, RenderBwrapArgv(plan, how));
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);

  CORDON_TRY(UniqueFd seccomp, SeccompMemFd(plan));
  CORDON_TRY(UniqueFd bwrap_stderr, MemFd("cordon-bwrap-stderr"));
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", "bwrap report pipe");
  UniqueFd report_read(report[0]);
  UniqueFd report_write(report[1]);
  int info[2];
  if (::pipe2(info, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", "bwrap info pipe");
  UniqueFd info_read(info[0]);
  UniqueFd info_write(info[1]);
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", "bwrap status pipe");
  UniqueFd status_read(status[0]);
  UniqueFd status_write(status[1]);

  linux_native::BrokerChannel broker;
  if (plan.seccomp.enabled && plan.seccomp.broker_connect) {
    CORDON_TRY(broker, linux_native::MakeBrokerChannel());
  }
  const int fds[kFirstFreeFd] = {stdio.stdin_fd,   stdio.stdout_fd,    bwrap_stderr.get(),
                                 stdio.stderr_fd,  report_write.get(), seccomp.get(),
                                 info_write.get(), status_write.get(), broker.child.get()};
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return core::FailSyscall("fork", "bwrap");
  if (pid == 0) {
    ExecBwrap(argv[0], argv.data(), fds, source_fds.data(), scratch.data(),
              static_cast<int>(source_fds.size()), parent);
  }
  report_write.Reset();
  info_write.Reset();
  status_write.Reset();
  broker.child.Reset();
  // bwrap's monitor names the sandbox's init before it lets it run, so the pidfd is taken
  // while that init is certainly alive (no pid reuse). Empty when bwrap failed before cloning.
  UniqueFd init_pidfd = OpenSandboxInit(info_read.get());

  // Until EOF: the start byte, then either nothing (the command runs) or a failed step.
  std::string bytes;
  char buffer[64];
  for (;;) {
    ssize_t n = ::read(report_read.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (bytes.size() < 256) bytes.append(buffer, static_cast<std::size_t>(n));
  }
  auto fail = [&](Error error) -> Result<exec::LaunchedProcess> {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return std::unexpected(std::move(error));
  };
  if (bytes.empty() || bytes[0] != kStartedByte) {
    bwrap_failed = true;
    return fail(Error{ErrorCode::kSystem, 0,
                      fmt::format("bwrap backend: bubblewrap could not build the sandbox: {}",
                                  BwrapMessage(bwrap_stderr.get()))});
  }
  if (bytes.size() > 1) {
    linux_native::StepReport r;
    std::memcpy(&r, bytes.data() + 1, std::min(sizeof r, bytes.size() - 1));
    const bool not_found = r.step == linux_native::Step::kExecve &&
                           (r.err == ENOENT || r.err == ENOTDIR || r.err == EACCES);
    return fail(Error{not_found ? ErrorCode::kCommandNotFound : ErrorCode::kSystem, r.err,
                      fmt::format("bwrap backend: step {}: {}{}", linux_native::StepName(r.step),
                                  std::strerror(r.err),
                                  not_found ? fmt::format(" ({})", plan.argv.front()) : "")});
  }
  if (!init_pidfd) {
    return fail(Error{ErrorCode::kSystem, 0,
                      "bwrap backend: bubblewrap did not name its sandbox's init on --info-fd"});
  }
  UniqueFd pidfd(linux_native::sys::PidfdOpen(pid, 0));
  if (!pidfd) return fail(core::SyscallError("pidfd_open", std::to_string(pid)));
  exec::LaunchedProcess launched;
  launched.pid = pid;
  launched.pidfd = std::move(pidfd);
  launched.sandbox_init_pidfd = std::move(init_pidfd);
  launched.status_fd = std::move(status_read);
  if (broker.ours) {
    // Sent before the command's execve, which the report pipe's EOF has shown.
    launched.connect_listener = linux_native::ReceiveListener(broker.ours.get());
    launched.connect_rules = linux_native::BrokerRules(plan, nullptr);
  }
  return launched;
}

}  // namespace

Result<exec::LaunchedProcess> LaunchBwrap(const plan::LaunchPlan& plan, const exec::StdioFds& stdio,
                                          const BwrapBinary& bwrap,
                                          const std::filesystem::path& trampoline) {
  // An optional mount (a host socket, an ancestor pin) whose target vanished since planning
  // hides nothing: it is dropped rather than let bwrap fail on it (bwrap would try to create
  // the missing target on the read-only host). One that vanishes between this check and
  // bwrap's mount fails bwrap's setup before anything ran: the launch is then retried without
  // it. Required ones stay, and bwrap refuses the run if they are gone (fail closed).
  plan::LaunchPlan current = plan;
  for (int attempt = 1;; ++attempt) {
    std::erase_if(current.mounts, VanishedOptional);
    bool bwrap_failed = false;
    Result<exec::LaunchedProcess> launched =
        LaunchAttempt(current, stdio, bwrap, trampoline, bwrap_failed);
    if (launched || !bwrap_failed || attempt == 3 ||
        std::none_of(current.mounts.begin(), current.mounts.end(), VanishedOptional)) {
      return launched;
    }
  }
}

}  // namespace cordon::bwrap
