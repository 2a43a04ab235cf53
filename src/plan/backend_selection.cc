#include "plan/backend_selection.h"

#include <fmt/format.h>

namespace cordon::plan {
namespace {

// The native backend's namespaces are the first choice; the message when they are not usable
// comes from the assessment (WhyNoNamespaces), so only the bwrap side is described here.
BackendSelection Bwrap(const BwrapProbe& probe, bool chosen_by_auto) {
  BackendSelection s;
  s.backend = Backend::kBwrap;
  if (!probe.usable) {
    s.reason = fmt::format("configured, but it cannot run here: {}", probe.detail);
    s.missing.push_back(
        probe.probed ? fmt::format("backend bwrap: {}", probe.detail)
                     : "backend bwrap: bubblewrap was not probed (internal error; fix: report it)");
    return s;
  }
  s.reason = fmt::format(
      "{}: {}{} builds the mount, PID and network namespaces; cordon-bwrap-exec adds Landlock "
      "and seccomp inside",
      chosen_by_auto ? "chosen by auto, the native backend's namespaces being unusable here"
                     : "configured",
      probe.detail, probe.setuid ? " (setuid root)" : "");
  return s;
}

// Seatbelt (macOS, docs/decisions/0020): the profile is the whole sandbox; no namespaces.
BackendSelection Seatbelt(const SeatbeltProbe& probe, bool chosen_by_auto) {
  BackendSelection s;
  s.backend = Backend::kSeatbelt;
  if (!probe.platform) {
    s.missing.push_back(
        "backend seatbelt is macOS-only (sandbox-exec); on Linux use backend auto, native or "
        "bwrap");
  } else if (!probe.usable) {
    s.missing.push_back(
        probe.probed
            ? fmt::format("backend seatbelt: {} (fix: a macOS whose /usr/bin/sandbox-exec "
                          "enforces profiles; otherwise cordon cannot sandbox on this Mac)",
                          probe.detail)
            : "backend seatbelt: sandbox-exec was not probed (internal error; fix: report it)");
  }
  if (!s.missing.empty()) {
    s.reason = fmt::format("{}, but it cannot run here: {}",
                           chosen_by_auto ? "chosen by auto" : "configured", s.missing.front());
    return s;
  }
  s.reason = fmt::format(
      "{}: {}; an SBPL profile confines writes to the workspace, the writable roots and a "
      "private HOME/TMPDIR, hides the credential paths and denies the network when asked; no "
      "namespaces (the process group is killed)",
      chosen_by_auto ? "chosen by auto, the only backend on macOS" : "configured", probe.detail);
  return s;
}

}  // namespace

const char* BackendName(Backend backend) {
  switch (backend) {
    case Backend::kNone:
      return "none";
    case Backend::kNative:
      return "native";
    case Backend::kBwrap:
      return "bwrap";
    case Backend::kSeatbelt:
      return "seatbelt";
  }
  return "none";
}

bool NeedsBwrapProbe(const Config& config, const linux_native::KernelFeatures& features) {
  if (config.sandbox.mode == SandboxMode::kOff) return false;
  return config.sandbox.backend == BackendChoice::kBwrap ||
         (config.sandbox.backend == BackendChoice::kAuto && !features.namespaces_usable());
}

bool NeedsSeatbeltProbe(const Config& config) {
  if (config.sandbox.mode == SandboxMode::kOff) return false;
  return config.sandbox.backend == BackendChoice::kSeatbelt ||
         config.sandbox.backend == BackendChoice::kAuto;
}

BackendSelection SelectBackend(const Config& config, const linux_native::KernelFeatures& features,
                               const BackendProbes& probes) {
  BackendSelection s;
  if (config.sandbox.mode == SandboxMode::kOff) {
    s.backend = Backend::kNone;
    return s;
  }
  switch (config.sandbox.backend) {
    case BackendChoice::kNative:
      return s;
    case BackendChoice::kBwrap:
      return Bwrap(probes.bwrap, false);
    case BackendChoice::kSeatbelt:
      return Seatbelt(probes.seatbelt, false);
    case BackendChoice::kAuto:
      break;
  }
  if (features.namespaces_usable()) {
    s.reason = "chosen by auto: its namespaces work here";
    return s;
  }
  // macOS: Seatbelt is the only backend there; when it cannot run, nothing can (fail closed).
  if (probes.seatbelt.platform) return Seatbelt(probes.seatbelt, true);
  // Without the native namespaces, a bubblewrap that can build them (setuid, or a kernel the
  // native mount view cannot use) gives every guarantee; the Landlock-only fallback gives fewer
  // and refuses .git protection. ADR 0018.
  if (probes.bwrap.usable) return Bwrap(probes.bwrap, true);
  s.reason = fmt::format("chosen by auto; bubblewrap cannot stand in: {}",
                         probes.bwrap.probed ? probes.bwrap.detail : "not probed");
  return s;
}

}  // namespace cordon::plan
