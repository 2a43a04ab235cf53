// The capabilities payload: what a session would enforce on this machine, layer by layer.
// `cordon status --json`, the MCP `initialize` result and the library all report this one
// value; its JSON schema is documented in docs/capabilities.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/config.h"
#include "cordon/run.h"

namespace cordon {

// One configured limit and what enforces it on this machine (docs/capabilities.md).
struct LimitEnforcement {
  std::string name;         // the config key: "memory_bytes", "processes", "open_files", ...
  std::uint64_t value = 0;  // configured value (0: no limit; timeout in milliseconds)
  // What would enforce it when set, e.g. "cgroup v2 memory.max", "cgroup v1 pids.max",
  // "RLIMIT_NPROC in the sandbox's user namespace", "RLIMIT_NOFILE", "supervisor".
  // Empty: nothing on this machine can; a set limit then refuses every run.
  std::string mechanism;
  bool enforced = false;  // set, and enforced by `mechanism`
};

struct Capabilities {
  SandboxMode mode = SandboxMode::kWorkspaceWrite;
  NetworkPolicy network = NetworkPolicy::kDeny;
  // With network kDomains: the patterns allowed and denied (canonical, lists expanded;
  // docs/network-domains.md). Empty otherwise.
  std::vector<std::string> allowed_domains;
  std::vector<std::string> denied_domains;
  // With network kDomains: the parent proxy the run's connects go through, "HOST:PORT (from
  // SOURCE)", or empty: none (sandbox.parent_proxy, decision 0053).
  std::string parent_proxy;
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
  // Every limit of the config (timeout_seconds, output_bytes, memory_bytes, processes,
  // open_files, cpu_seconds), in that order, with its mechanism.
  std::vector<LimitEnforcement> limits;
  // The host-run files kept read-only in every writable root (sandbox.host_run_files, as
  // entries relative to a root; a trailing "/" names a directory). Empty when none are.
  std::vector<std::string> host_run_files;
  // How many levels below each writable root nested projects are searched for and protected
  // as the roots are (their .git and host-run files; sandbox.nested_project_depth). 0: none.
  std::uint64_t nested_project_depth = 0;
  // What the command sees of the real homes (sandbox.home) and, when they are hidden, the
  // paths in them it may read besides the built-in tool paths (sandbox.readable_paths).
  HomeView home = HomeView::kReadOnly;
  std::vector<std::string> readable_paths;
  // Where the tools' caches live across commands (sandbox.tool_caches; decision 0041): kOff
  // outside workspace_write mode.
  ToolCaches tool_caches = ToolCaches::kOff;

  bool can_run() const { return missing.empty(); }
};

}  // namespace cordon
