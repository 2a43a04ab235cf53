// Which backend runs a session's commands: the config's choice resolved against the kernel
// probe and the bwrap probe (docs/decisions/0018). Pure; the assessment and `cordon status`
// both use it, so the backend reported is the backend that runs.
//
//   auto (default): native when its namespaces work here; else bubblewrap when it can build
//                   namespaces (setuid, or a kernel the native backend cannot use, e.g. no
//                   mount_setattr); else the native backend's Landlock-only fallback.
//                   On macOS (probes.seatbelt.platform): Seatbelt, or a refusal naming the fix.
//   native | bwrap: that backend or, when it cannot run, a refusal naming the fix.
//   seatbelt:       macOS only, when sandbox-exec enforces (probed); refused on Linux.
#pragma once

#include <string>
#include <vector>

#include "cordon/config.h"
#include "linux/kernel_features.h"
#include "plan/backend_probe.h"

namespace cordon::plan {

enum class Backend { kNone, kNative, kBwrap, kSeatbelt };

const char* BackendName(Backend backend);  // "none", "native", "bwrap", "seatbelt"

struct BackendSelection {
  Backend backend = Backend::kNative;
  std::string reason;                // why this backend (for capabilities.backend_reason)
  std::vector<std::string> missing;  // non-empty: the chosen backend cannot run here
};

// Whether the session must probe bubblewrap for `config` on a machine with `features`: when
// it is asked for, or when auto may fall back to it. The probe runs bwrap once (a few ms).
bool NeedsBwrapProbe(const Config& config, const linux_native::KernelFeatures& features);

// Whether the session must probe sandbox-exec (on a platform that has it): when it is asked
// for, or under auto. The probe runs sandbox-exec twice.
bool NeedsSeatbeltProbe(const Config& config);

BackendSelection SelectBackend(const Config& config, const linux_native::KernelFeatures& features,
                               const BackendProbes& probes);

}  // namespace cordon::plan
