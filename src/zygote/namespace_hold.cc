#include "zygote/namespace_hold.h"

#include <memory>

#include "core/close_later.h"

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

void HoldMountNamespace(exec::LaunchedProcess& launched, core::UniqueFd mount_ns) {
  if (!mount_ns.valid() || launched.resource != nullptr) return;
  launched.resource = std::make_unique<HeldNamespace>(std::move(mount_ns));
}

}  // namespace cordon::zygote
