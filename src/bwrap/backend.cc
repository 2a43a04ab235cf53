#include "bwrap/backend.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwrap/launch.h"
#include "bwrap/run_captured.h"

namespace cordon::bwrap {
namespace {

// bwrap builds user, mount, PID and network namespaces and runs /bin/true; its stderr goes to a
// memfd for the message.
Result<void> ProbeNamespaces(const BwrapBinary& bwrap) {
  CORDON_TRY(CapturedRun run,
             RunCaptured({bwrap.path.string(), "--unshare-user-try", "--unshare-pid",
                          "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--proc",
                          "/proc", "--dev", "/dev", "--", "true"},
                         {"PATH=/usr/bin:/bin"}, CapturedStream::kStderr, 511));
  if (run.exited_zero) return {};
  std::string& text = run.output;
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
