// What a Session pins at Create: the configuration, the canonical workspace, the compiled
// policy and the one kernel probe. Immutable afterwards and shared (shared_ptr<const State>) by
// every copy of the Session and every concurrent Run. The one mutable part is the zygote slot
// of a long-lived session (session/zygote_slot.h), which has its own lock.
#pragma once

#include <filesystem>

#include "cordon/config.h"
#include "cordon/policy.h"
#include "cordon/session.h"
#include "linux/kernel_features.h"
#include "session/zygote_slot.h"

namespace cordon {

struct Session::State {
  Config config;
  std::filesystem::path workspace;  // canonical, an existing directory
  Policy policy;
  linux_native::KernelFeatures features;
  mutable session::ZygoteSlot zygote;
};

}  // namespace cordon
