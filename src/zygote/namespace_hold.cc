#include "zygote/namespace_hold.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <memory>
#include <string>

#include "core/close_later.h"
#include "core/unique_fd.h"
#include "exec/process_control.h"

namespace cordon::zygote {
namespace {

class HeldNamespace : public exec::RunResource {
 public:
  explicit HeldNamespace(core::UniqueFd fd) : fd_(std::move(fd)) {}
  // The supervisor destroys the LaunchedProcess once init is reaped: the last close, and the
  // unmounting it brings, happen on the closing thread.
  ~HeldNamespace() override { core::CloseLater(std::move(fd_)); }

 private:
  core::UniqueFd fd_;
};

}  // namespace

void HoldMountNamespace(exec::LaunchedProcess& launched) {
  if (launched.pid <= 0 || launched.resource != nullptr) return;
  const std::string path = fmt::format("/proc/{}/ns/mnt", launched.pid);
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return;
  // init is this process's unreaped child, so its pid names it; and should something reap it
  // behind our back (SIGCHLD ignored in an embedder), its pidfd says it was still there when
  // the namespace was opened, so that this is its namespace, not a later process's.
  if (launched.pidfd.valid() && !exec::PidfdAlive(launched.pidfd.get())) return;
  launched.resource = std::make_unique<HeldNamespace>(std::move(fd));
}

}  // namespace cordon::zygote
