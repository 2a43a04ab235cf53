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
// Every protected or hidden path is denied three ways: exactly (`literal`), as a subtree
// (`subpath`, which alone may not cover the first creation of the path itself), and by a regex
// of its base (the writable root it lies in, else its parent; quoted) and the rest of its path
// with each ASCII letter matched in either case: macOS volumes are case-insensitive, so
// `mkdir .GIT` (or `.Config` on the way to `.config/mise.toml`) would otherwise create what
// host tools open. The regex text is a parameter too (PREFIX_NAME_N).
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
  std::vector<std::filesystem::path> writable;  // subtrees the command may write
  // Inside a writable subtree, still read-only: git metadata and host-run files, present or
  // absent (an absent one must not be created: its name is denied, case-insensitively too).
  std::vector<std::filesystem::path> read_only;
  // Directories that may not be renamed or removed (their contents stay writable): the plan's
  // pins. The profile adds every writable root and every ancestor inside a writable subtree of
  // a protected or hidden path, so nothing protected by its path can be moved out from under
  // that path (and back).
  std::vector<std::filesystem::path> pinned;
  std::vector<std::filesystem::path> hidden_dirs;  // unreadable subtrees (credentials)
  std::vector<std::filesystem::path> hidden_files;
  // Credential paths that do not exist at launch: denied by name, so one the host (or the
  // command) creates during the run is unreadable too.
  std::vector<std::filesystem::path> hidden_absent;
  // The hidden home (sandbox.home "hidden"): each home neither readable nor listable, what the
  // host creates there later included, except `home_grants` (the tool paths, readable_paths,
  // the workspace and writable roots inside a home); the directories leading from a home to a
  // grant may be stat'ed (realpath, getcwd), not listed.
  std::vector<std::filesystem::path> hidden_homes;
  std::vector<std::filesystem::path> home_grants;
  bool network_allowed = false;
};

struct SeatbeltProfile {
  std::string text;                                         // SBPL, free of any path
  std::vector<std::pair<std::string, std::string>> params;  // NAME, canonical path
};

// Writable: the plan's writable binds plus `private_dir` (the per-command HOME and TMPDIR the
// backend creates, since macOS has no private tmpfs); read-only: the plan's read-only binds and
// absent protected entries that lie in a writable subtree (git metadata, host-run files);
// hidden: the plan's masks and its absent hidden paths; pinned: the plan's pins; hidden homes:
// the plan's home views, with the binds inside them as their grants.
SeatbeltPolicy SeatbeltPolicyFromPlan(const plan::LaunchPlan& plan,
                                      const std::filesystem::path& private_dir,
                                      bool network_allowed);

SeatbeltProfile RenderSeatbelt(const SeatbeltPolicy& policy);

// The regex for a relative path matched case-insensitively on ASCII letters, to follow its
// quoted base: ".config/x" -> "[.][cC][oO][nN][fF][iI][gG]/[xX]" then "(/|$)" for a subtree or
// "$" for the entry alone. Any character but a letter, digit, '_', '-' or '/' is matched by a
// class of itself or, where a class could not hold it, by any one character (a denial that
// matches more, never less).
std::string CaseInsensitiveRegex(const std::string& relative, bool subtree);

// One policy with every kind of rule, for each network setting: what the probe compiles so a
// profile sandbox-exec would refuse is found once per session, not on a command.
std::vector<SeatbeltPolicy> ProbeVariants(const std::filesystem::path& scratch);

// sandbox-exec -p PROFILE -D NAME=VALUE ... -- COMMAND ARGS... (no shell anywhere).
std::vector<std::string> SandboxExecArgv(const SeatbeltProfile& profile,
                                         const std::vector<std::string>& argv);

}  // namespace cordon::seatbelt
