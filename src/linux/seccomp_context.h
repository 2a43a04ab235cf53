// A libseccomp filter context held as a value, and libseccomp's results (-errno) as cordon's
// errors: shared by the command's filter (seccomp_filter.cc) and cordon-resolver's own
// (src/resolver/confinement.cc). Header-only: the resolver does not link the native backend.
#pragma once

#include <seccomp.h>

#include <memory>
#include <string_view>

#include "cordon/error.h"
#include "core/syscall_error.h"

namespace cordon::linux_native {

struct SeccompContextFree {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using SeccompContext = std::unique_ptr<void, SeccompContextFree>;

// libseccomp returns -errno.
inline Result<void> CheckSeccomp(int rc, std::string_view what) {
  if (rc < 0) return core::FailSyscall("libseccomp", what, -rc);
  return {};
}

}  // namespace cordon::linux_native
