// The Seatbelt backend (macOS): a LaunchPlan rendered as an SBPL profile for
// /usr/bin/sandbox-exec. Paths never appear in the profile text: every path is a parameter
// (`(param "WRITABLE_0")`) passed with `-D NAME=VALUE`, so no path can change the profile's
// meaning whatever characters it holds. Paths are the plan's canonical (realpath) paths, which
// matters on macOS where /tmp and /var are symlinks into /private.
//
//   SeatbeltPolicy policy = SeatbeltPolicyFromPlan(plan, private_dir, network_allowed);
//   SeatbeltProfile profile = RenderSeatbelt(policy);
//   std::vector<std::string> argv = SandboxExecArgv(profile, plan.argv);
//
// Pure: golden-tested on Linux (tests/unit/seatbelt/golden/); NOT yet verified on a Mac.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "plan/launch_plan.h"

namespace cordon::seatbelt {

inline constexpr const char* kSandboxExec = "/usr/bin/sandbox-exec";

struct SeatbeltPolicy {
  std::vector<std::filesystem::path> writable;   // subtrees the command may write
  std::vector<std::filesystem::path> read_only;  // inside a writable subtree, still read-only
  // Directories that may not be renamed or removed (their contents stay writable): the
  // ancestors of a hidden path inside a writable subtree, so the secret cannot be moved out
  // from under its path-based denial.
  std::vector<std::filesystem::path> pinned;
  std::vector<std::filesystem::path> hidden_dirs;  // unreadable subtrees (credentials)
  std::vector<std::filesystem::path> hidden_files;
  bool network_allowed = false;
};

struct SeatbeltProfile {
  std::string text;                                         // SBPL, free of any path
  std::vector<std::pair<std::string, std::string>> params;  // NAME, canonical path
};

// Writable: the plan's writable binds plus `private_dir` (the per-command HOME and TMPDIR the
// backend creates, since macOS has no private tmpfs); read-only: the plan's read-only binds
// that lie in a writable subtree (git metadata); hidden: the plan's masks.
SeatbeltPolicy SeatbeltPolicyFromPlan(const plan::LaunchPlan& plan,
                                      const std::filesystem::path& private_dir,
                                      bool network_allowed);

SeatbeltProfile RenderSeatbelt(const SeatbeltPolicy& policy);

// sandbox-exec -p PROFILE -D NAME=VALUE ... -- COMMAND ARGS... (no shell anywhere).
std::vector<std::string> SandboxExecArgv(const SeatbeltProfile& profile,
                                         const std::vector<std::string>& argv);

}  // namespace cordon::seatbelt
