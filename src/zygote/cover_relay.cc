#include "zygote/cover_relay.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "linux/child_context.h"
#include "linux/error_pipe.h"
#include "linux/mount_view.h"
#include "linux/system_headers/syscalls.h"
#include "plan/host_run_paths.h"

namespace cordon::zygote {
namespace {

// ioctl(2) on a namespace descriptor: the user namespace owning it (linux/nsfs.h, Linux 4.9).
constexpr unsigned long kNsGetUserns = _IO(0xb7, 0x1);

}  // namespace

Result<void> CoverInPreparedView(int mount_ns, const std::vector<plan::Placeholder>& placeholders,
                                 const std::filesystem::path& home) {
  if (placeholders.empty()) return {};
  // Everything the child reads is made here: it only makes system calls.
  std::vector<std::string> paths;
  paths.reserve(placeholders.size());
  for (const plan::Placeholder& p : placeholders) paths.push_back(p.path().string());
  std::vector<linux_native::ChildCover> covers;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    covers.push_back({paths[i].c_str(), placeholders[i].directory});
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
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return core::FailSyscall("pipe2", "placeholder covers");
  const pid_t child = linux_native::sys::CloneForkLike(0);
  if (child < 0) {
    ::close(report[0]);
    ::close(report[1]);
    return core::FailSyscall("clone", "placeholder covers");
  }
  if (child == 0) {
    // The view's user namespace (its capabilities over the view), then the view itself.
    int result[2] = {-2, 0};  // {index or -1 for the cover source, -2 for the joins; errno}
    if (::setns(user_ns.get(), CLONE_NEWUSER) != 0 || ::setns(mount_ns, CLONE_NEWNS) != 0) {
      result[1] = errno;
    } else if (const linux_native::StepResult r =
                   linux_native::CoverPlaceholders(covers, ignore ? ignore_path.c_str() : nullptr,
                                                   ignore ? ignore_text.c_str() : nullptr);
               r.failed()) {
      result[0] = r.detail;
      result[1] = r.err;
    } else {
      ::_exit(0);
    }
    (void)!::write(report[1], result, sizeof result);
    ::_exit(1);
  }
  ::close(report[1]);
  int result[2] = {0, 0};
  const ssize_t got = ::read(report[0], result, sizeof result);
  ::close(report[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (got != static_cast<ssize_t>(sizeof result)) {
    return Fail(ErrorCode::kSystem, "placeholder covers: the relay died without a report");
  }
  if (result[0] == -2) {  // gone (ESRCH, ENOENT...): nothing ran, it starts another way
    return Fail(ErrorCode::kUnavailable,
                fmt::format("prepared sandbox: setns: {}", std::strerror(result[1])), result[1]);
  }
  std::string what;
  if (static_cast<std::size_t>(result[0]) == placeholders.size()) {
    what = fmt::format("writing {}", ignore_path);
  }
  if (result[0] >= 0 && static_cast<std::size_t>(result[0]) < placeholders.size()) {
    what = fmt::format("cover of the placeholder {}", paths[static_cast<std::size_t>(result[0])]);
  }
  return Fail(ErrorCode::kSystem,
              fmt::format("prepared sandbox: {}: {}", what, std::strerror(result[1])), result[1]);
}

}  // namespace cordon::zygote
