// What a Session pins at Create: the configuration, the canonical workspace, the compiled
// policy, the one kernel probe and the backend probe. Immutable afterwards and shared
// (shared_ptr<const State>) by every copy of the Session and every concurrent Run. The mutable
// parts are the zygote slot of a long-lived session (zygote/zygote_slot.h) and the .git
// placeholders, each with its own lock.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "cordon/config.h"
#include "cordon/policy.h"
#include "cordon/session.h"
#include "linux/kernel_features.h"
#include "plan/launch_plan.h"
#include "plan/placeholder_records.h"
#include "plan/plan_caches.h"
#include "session/backend_choice.h"
#include "zygote/zygote_slot.h"

namespace cordon {

struct Session::State {
  Config config;
  std::filesystem::path workspace;  // canonical, an existing directory
  plan::FileId workspace_id;        // that directory, when the session was created
  // config.sandbox.writable_roots, made canonical by Create: the directories they named then.
  std::vector<plan::FileId> writable_root_ids;
  Policy policy;
  linux_native::KernelFeatures features;
  session::SessionBackends backends;  // bubblewrap, when the config may need it (ADR 0018)
  SessionOptions options;
  // A long-lived session's watched host scans, handed to every plan; null otherwise (scan).
  std::unique_ptr<plan::PlanCaches> caches;
  mutable zygote::ZygoteSlot zygote;  // built from `options`
  // Where this process records the placeholders it holds ($XDG_RUNTIME_DIR); null
  // without a runtime directory of this user (plan/placeholder_records.h).
  std::shared_ptr<const plan::PlaceholderRecords> placeholder_records;
};

}  // namespace cordon
