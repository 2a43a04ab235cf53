// The hidden home (sandbox.home = "hidden", decision 0038): inside the sandbox the real homes
// are empty and read-only — the caller's homes (CallerHomes), every home under /home (and
// /Users, macOS's, where the Seatbelt profile denies them by path), and /root
// for a caller that is not root — except what is granted: the workspace and the writable roots
// inside them (bound as ever), the tool paths that exist (toolchains and their bin directories,
// git's own config: kHomeToolPaths), the directories of the caller's PATH that lie inside them,
// the directories the caller's toolchain variables name (ToolchainDirectories), and
// sandbox.readable_paths; for a PATH directory named bin, its prefix too (the toolchain's lib/
// and share/ beside it). A home, ~/.local, ~/.local/share, ~/.config or ~/.cache is never
// granted for a toolchain's sake. Anything else, and anything created there later, is not there.
//
// The view is a tmpfs over each area, made before every bind so that the grants and the roots
// inside it are bound into it, and made read-only once they are (MountOpKind::kHomeView). A
// secret the built-in list or hidden_paths names keeps its mask inside a grant or a root; one
// elsewhere in an area needs none.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/config.h"
#include "plan/home_aliases.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// Relative to each home: what toolchains installed in a home need to run (their binaries, the
// trees those binaries load from) and git's identity and settings. Never a credential file:
// ~/.git-credentials, ~/.npmrc, ~/.cargo/credentials.toml stay out (and stay masked).
inline constexpr std::string_view kHomeToolPaths[] = {".rustup",
                                                      ".cargo/bin",
                                                      ".nvm",
                                                      ".pyenv",
                                                      ".rbenv",
                                                      ".volta",
                                                      ".sdkman/candidates",
                                                      ".bun/bin",
                                                      ".deno/bin",
                                                      ".local/bin",
                                                      ".local/lib",
                                                      "go/bin",
                                                      ".gitconfig",
                                                      ".config/git/config",
                                                      ".config/git/ignore",
                                                      ".config/git/attributes"};

struct HomeViewPlan {
  std::vector<std::filesystem::path> areas;  // an empty read-only view over each
  // The homes, /home and /root as the view knows them (their second mounts not included),
  // whichever the view: where the planner looks for second mounts inside the roots.
  std::vector<std::filesystem::path> own_areas;
  std::vector<std::filesystem::path> grants;  // inside an area, bound read-only; canonical
};

// `home`: the view decided (Assessment::home, never kAuto); `homes`: CallerHomes; `visible`: the
// writable roots and the workspace (an area inside one is not hidden, it is the command's anyway);
// `caller_env`: the caller's environment (its PATH); `private_areas`: /tmp and /var/tmp, replaced
// anyway. Reads the file system (lstat, realpath, /home's entries are not listed: /home is one
// area). `mounts`: the mount table (ReadMountTable), where each area's second mounts are found:
// each such directory is an area too. With `home` kReadOnly only those second mounts are areas
// (the homes show at their own paths) and nothing is granted.
HomeViewPlan PlanHomeView(const SandboxConfig& config, HomeView home,
                          const std::vector<std::filesystem::path>& homes,
                          const std::vector<std::filesystem::path>& visible,
                          const std::vector<std::string>& caller_env,
                          const std::vector<std::filesystem::path>& private_areas,
                          const std::vector<MountEntry>& mounts = {});

// Whether `path` lies in an area and in none of `holes` (grants, roots): nothing is there to
// mask or pin.
bool HiddenByHomeView(const HomeViewPlan& view, const std::vector<std::filesystem::path>& holes,
                      const std::filesystem::path& path);

// Adds the view to `mounts`: a kHomeView per area at the front, a read-only bind per grant;
// drops the masks and pins of what lies hidden in an area outside `holes` (the grants, the
// roots, the workspace): nothing is there for them.
void AddHomeView(const HomeViewPlan& view, const std::vector<std::filesystem::path>& holes,
                 std::vector<MountOp>& mounts);

}  // namespace cordon::plan
