// The backend a session's sandboxed commands launch through, settled once at Session::Create
// (docs/decisions/0018): bubblewrap is located and probed only when the config asks for it or
// `auto` may need it (the native namespaces are unusable here), and the probe's verdict goes to
// the pure assessment (plan/backend_selection.h), which refuses runs it cannot serve.
//
//   session::SessionBackends backends = session::ProbeBackends(config, features, workspace);
//   plan::Plan(config, features, request, backends.probes);           // per command
//   session::LaunchSandboxed(backends, zygote, plan, stdio);          // per command
#pragma once

#include <filesystem>
#include <optional>

#include "bwrap/backend.h"
#include "cordon/config.h"
#include "cordon/error.h"
#include "exec/launched_process.h"
#include "linux/kernel_features.h"
#include "plan/backend_probe.h"
#include "plan/launch_plan.h"
#include "zygote/zygote_slot.h"

namespace cordon::session {

// Process-wide: sessions created after this look for cordon-bwrap-exec at `path` only (still
// trust-checked like bwrap). For test binaries and embedders whose executable does not sit
// beside the trampoline; empty restores the default search (bwrap/launch.h).
void SetBwrapTrampoline(std::filesystem::path path);

// Tests only, process-wide: sessions created after this treat the platform as having Seatbelt
// and use the program at `path` as sandbox-exec (still probed: it must deny the probe's denied
// write, or the backend is refused). Not reachable from the config or the environment. Empty
// restores the default: /usr/bin/sandbox-exec, on macOS only.
void SetSandboxExecForTesting(std::filesystem::path path);

struct SessionBackends {
  plan::BackendProbes probes;
  std::optional<bwrap::BwrapBackend> bwrap;  // set exactly when probes.bwrap.usable
  std::filesystem::path sandbox_exec;        // set exactly when probes.seatbelt.usable
};

// Never fails: a backend that cannot run here is recorded with the reason and the fix, and the
// assessment then refuses every run that needs it (fail closed).
SessionBackends ProbeBackends(const Config& config, const linux_native::KernelFeatures& features,
                              const std::filesystem::path& workspace);

// Starts a sandboxed `plan` with the backend its assessment chose: Seatbelt, bubblewrap, or the
// native backend (joining the session's zygote when it can serve the plan; the zygote is
// native-only). `cgroup`: the run's cgroup (native only: bwrap refuses resource limits, Seatbelt a
// cgroup).
[[nodiscard]] Result<exec::LaunchedProcess> LaunchSandboxed(const SessionBackends& backends,
                                                            zygote::ZygoteSlot& zygote,
                                                            const plan::LaunchPlan& plan,
                                                            const exec::StdioFds& stdio,
                                                            const limits::CgroupAttach& cgroup);

}  // namespace cordon::session
