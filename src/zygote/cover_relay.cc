#include "zygote/cover_relay.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "linux/child_context.h"
#include "linux/child_stacks.h"
#include "linux/mount_view.h"
#include "linux/system_headers/syscalls.h"
#include "plan/host_run_paths.h"

namespace cordon::zygote {
namespace {

// ioctl(2) on a namespace descriptor: the user namespace owning it (linux/nsfs.h, Linux 4.9).
constexpr unsigned long kNsGetUserns = _IO(0xb7, 0x1);

// What the relay child does and what it reports, in the memory it shares with its creator.
struct CoverJob {
  int user_ns;
  int mount_ns;
  const std::vector<linux_native::ChildCover>* covers;
  const char* ignore_path;
  const char* ignore_text;
  bool reported = false;
  int index = 0;  // the failing cover's index (covers->size(): the ignore file), -2: the joins
  int err = 0;
};

// The relay: the view's user namespace (its capabilities over the view), then the view itself,
// then the covers. Raw system calls only.
int CoverMain(void* arg) {
  auto* job = static_cast<CoverJob*>(arg);
  if (::setns(job->user_ns, CLONE_NEWUSER) != 0 || ::setns(job->mount_ns, CLONE_NEWNS) != 0) {
    job->index = -2;
    job->err = errno;
    job->reported = true;
    ::_exit(1);
  }
  const linux_native::StepResult r =
      linux_native::CoverPlaceholders(*job->covers, job->ignore_path, job->ignore_text);
  if (!r.failed()) ::_exit(0);
  job->index = r.detail;
  job->err = r.err;
  job->reported = true;
  ::_exit(1);
}

}  // namespace

Result<void> CoverInPreparedView(int mount_ns, const std::vector<plan::Placeholder>& placeholders,
                                 const std::filesystem::path& home) {
  if (placeholders.empty()) return {};
  // Everything the child reads is made here: it only makes system calls.
  const std::vector<plan::PlaceholderCover> wanted = plan::PlaceholderCovers(placeholders);
  std::vector<linux_native::ChildCover> covers;
  for (const plan::PlaceholderCover& cover : wanted) {
    covers.push_back({cover.path.c_str(), cover.directory, cover.pin});
  }
  const std::string ignore_path = (home / plan::kPlaceholderGitIgnore).string();
  const std::string ignore_text = plan::PlaceholderGitIgnore(placeholders);
  const bool ignore = !ignore_text.empty() && !home.empty();
  // The user namespace that owns the view: its capabilities are what covering needs.
  core::UniqueFd user_ns(::ioctl(mount_ns, kNsGetUserns));
  if (!user_ns) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("prepared sandbox: its user namespace: {}", std::strerror(errno)),
                errno);
  }
  // A child in this process's address space, on a stack of its own (no copy of the session's
  // page tables: a fork of a long-lived server costs milliseconds), with its own fs struct
  // (joining a user namespace needs it unshared). This thread waits until it exits; every
  // signal stays blocked in it, since a handler would run on the shared memory.
  Result<linux_native::ChildStacks> stacks = linux_native::ChildStacks::Map();
  if (!stacks) return std::unexpected(std::move(stacks).error());
  CoverJob job{user_ns.get(), mount_ns, &covers, ignore ? ignore_path.c_str() : nullptr,
               ignore ? ignore_text.c_str() : nullptr};
  sigset_t all;
  sigset_t previous;
  ::sigfillset(&all);
  if (const int err = ::pthread_sigmask(SIG_SETMASK, &all, &previous); err != 0) {
    return core::FailSyscall("pthread_sigmask", "SIG_SETMASK, every signal", err);
  }
  const pid_t child =
      ::clone(&CoverMain, stacks->init_top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &job);
  const int clone_errno = errno;
  (void)::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (child < 0) return core::FailSyscall("clone", "placeholder covers", clone_errno);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (!job.reported) {
    return Fail(ErrorCode::kSystem, "placeholder covers: the relay died without a report");
  }
  const int result[2] = {job.index, job.err};
  if (result[0] == -2) {  // gone (ESRCH, ENOENT...): nothing ran, it starts another way
    return Fail(ErrorCode::kUnavailable,
                fmt::format("prepared sandbox: setns: {}", std::strerror(result[1])), result[1]);
  }
  std::string what;
  if (static_cast<std::size_t>(result[0]) == wanted.size()) {
    what = fmt::format("writing {}", ignore_path);
  }
  if (result[0] >= 0 && static_cast<std::size_t>(result[0]) < wanted.size()) {
    const plan::PlaceholderCover& cover = wanted[static_cast<std::size_t>(result[0])];
    what = fmt::format("{} {}",
                       cover.pin ? "pin of the placeholder's parent" : "cover of the placeholder",
                       cover.path.string());
  }
  return Fail(ErrorCode::kSystem,
              fmt::format("prepared sandbox: {}: {}", what, std::strerror(result[1])), result[1]);
}

}  // namespace cordon::zygote
