#include "bwrap/backend.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "bwrap/launch.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"

namespace cordon::bwrap {
namespace {

// bwrap builds user, mount, PID and network namespaces and runs /bin/true; its stderr goes to a
// memfd for the message.
Result<void> ProbeNamespaces(const BwrapBinary& bwrap) {
  core::UniqueFd err(::memfd_create("cordon-bwrap-probe", MFD_CLOEXEC));
  if (!err) return core::FailSyscall("memfd_create", "bwrap probe");
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, err.get(), STDERR_FILENO);
  const std::string path = bwrap.path.string();
  const char* argv[] = {path.c_str(),
                        "--unshare-user-try",
                        "--unshare-pid",
                        "--unshare-net",
                        "--die-with-parent",
                        "--ro-bind",
                        "/",
                        "/",
                        "--proc",
                        "/proc",
                        "--dev",
                        "/dev",
                        "--",
                        "true",
                        nullptr};
  char* envp[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
  pid_t pid = 0;
  const int rc =
      ::posix_spawn(&pid, path.c_str(), &actions, nullptr, const_cast<char* const*>(argv), envp);
  ::posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    return core::FailSyscall("posix_spawn", path);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  char message[512];
  ssize_t n = ::pread(err.get(), message, sizeof message - 1, 0);
  std::string text(message, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return Fail(ErrorCode::kUnavailable,
              fmt::format("bubblewrap cannot create namespaces here ({}): enable unprivileged "
                          "user namespaces (see `cordon doctor`) or use the native backend's "
                          "Landlock-only fallback",
                          text.empty() ? "no message" : text));
}

}  // namespace

Result<BwrapBackend> BwrapBackend::Create(const std::vector<std::filesystem::path>& writable_roots,
                                          const std::filesystem::path& configured,
                                          const std::filesystem::path& trampoline) {
  BwrapBackend backend;
  CORDON_TRY(backend.binary_, LocateBwrap(configured, writable_roots));
  CORDON_TRY(backend.trampoline_, LocateTrampoline(writable_roots, trampoline));
  struct stat st {};
  backend.setuid_ = ::stat(backend.binary_.path.c_str(), &st) == 0 && st.st_uid == 0 &&
                    (st.st_mode & S_ISUID) != 0;
  CORDON_TRY_VOID(ProbeNamespaces(backend.binary_));
  return backend;
}

Result<exec::LaunchedProcess> BwrapBackend::Launch(const plan::LaunchPlan& plan,
                                                   const exec::StdioFds& stdio) const {
  return LaunchBwrap(plan, stdio, binary_, trampoline_);
}

}  // namespace cordon::bwrap
