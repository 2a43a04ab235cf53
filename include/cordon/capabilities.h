// The capabilities payload: what a session would enforce on this machine, layer by layer.
// `cordon status --json`, the MCP `initialize` result and the library all report this one
// value; its JSON schema is documented in docs/capabilities.md.
#pragma once

#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/run.h"

namespace cordon {

struct Capabilities {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  NetworkPolicy network = NetworkPolicy::kDeny;
  std::string backend;               // the backend that would run commands ("native", "none", ...)
  std::string backend_reason;        // why that backend was chosen
  Enforcement enforcement;           // the layers that would be in force
  bool filesystem_enforced = false;  // the mode's write confinement holds
  bool network_enforced = false;     // network deny holds (false when network is allowed)
  // Requested guarantees that this machine cannot give. Non-empty means every run is refused
  // (fail closed); each entry says what is missing and how to fix it.
  std::vector<std::string> missing;
  // Features cordon does not implement (yet); reported so a client never assumes them.
  std::vector<std::string> unsupported;

  bool can_run() const { return missing.empty(); }
};

}  // namespace cordon
