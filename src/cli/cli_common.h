// Pieces every cordon subcommand shares: the global options, loading the configuration with
// command-line overrides, resolving the workspace, printing the capabilities, and the exit
// codes.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/env.h"
#include "cordon/capabilities.h"
#include "cordon/config.h"
#include "cordon/error.h"
#include "cordon/session.h"
#include "worktree/detect.h"

namespace cordon::cli {

// Exit codes of the cordon binary (docs/cli.md). A command's own code passes through.
inline constexpr int kExitTimedOut = 124;
inline constexpr int kExitSetupFailed = 125;  // bad config or flags, sandbox unavailable
inline constexpr int kExitDenied = 126;
inline constexpr int kExitDoctorMissing =
    1;  // doctor: a feature the configuration needs is missing

// One row of the exit-status table that --help's footer and the man page print.
struct ExitCodeDoc {
  const char* code;
  const char* meaning;
};
inline constexpr ExitCodeDoc kExitCodes[] = {
    {"0", "success; for run: the command exited 0 (otherwise its own exit code passes through)"},
    {"1",
     "doctor: a kernel feature the configured guarantees need is missing; git commit: not "
     "committed (nothing to commit, a nested repository, a git step failed)"},
    {"124", "run: the command timed out; its whole process tree was killed"},
    {"125",
     "cordon could not set up: bad flags or config, an invalid workspace, or a guarantee "
     "this machine cannot enforce (fail closed: nothing ran)"},
    {"126",
     "denied by the command policy, or an outside-sandbox request refused (nothing ran); run: "
     "the command was found but is not executable in the sandbox"},
    {"127", "run: the command was not found in the sandbox"},
    {"128+N", "run: the command was killed by signal N"},
};

struct GlobalOptions {
  std::string config_path;  // --config FILE; empty: the default user config location
  // Not an option: the command line as given (Main sets it), what `cordon run` hands a run
  // server to resolve as the `cordon` front would (decision 0028).
  std::vector<std::string> command_line;
};

// Flags that override the config file (run, status).
struct SandboxFlags {
  std::string mode;                           // --mode
  std::string network;                        // --network
  std::vector<std::string> allow_domains;     // --allow-domain (repeatable; a pattern or @list)
  std::vector<std::string> deny_domains;      // --deny-domain (repeatable)
  std::string backend;                        // --backend
  std::vector<std::string> writable_roots;    // --writable-root (repeatable)
  std::string home;                           // --home
  std::string tool_caches;                    // --tool-caches
  std::vector<std::string> readable_paths;    // --readable (repeatable)
  std::optional<double> timeout_seconds;      // --timeout
  std::optional<std::uint64_t> memory_bytes;  // --memory (K/M/G suffixes, 1024-based)
  std::optional<std::uint64_t> processes;     // --processes
  std::optional<std::uint64_t> open_files;    // --open-files
  std::optional<std::uint64_t> cpu_seconds;   // --cpu-seconds
  bool unsafe = false;                        // --unsafe: mode off, with a warning
};

// "{a,b,c}": the CLI11 type name of an option whose value is one of `names`. --help shows it,
// and the man page and the completions read the choices back from it.
template <std::size_t N>
std::string ChoiceTypeName(const std::array<std::string_view, N>& names) {
  std::string out = "{";
  for (std::string_view name : names) {
    if (out.size() > 1) out += ',';
    out += name;
  }
  return out + "}";
}

// Where a command line was typed: the working directory and the environment variables that
// relative paths and the configuration are resolved against. This process's own, except in the
// run server, which resolves a `cordon` front's command line (decision 0028).
struct Caller {
  std::filesystem::path cwd;  // empty when unreadable
  config::Env env;
};
Caller ThisProcess();

// $XDG_RUNTIME_DIR when set and absolute, else empty (SessionOptions::runtime_dir).
std::filesystem::path RuntimeDirectory();

// The user config (or defaults when there is none) with `flags` applied; a relative --config
// or --writable-root is relative to `caller.cwd`.
[[nodiscard]] Result<Config> LoadConfig(const GlobalOptions& global, const SandboxFlags& flags,
                                        const Caller& caller = ThisProcess());

// The user config file that `cordon sandbox` edits.
[[nodiscard]] Result<std::filesystem::path> ConfigFilePath(const GlobalOptions& global);

// Prints "cordon: <message>" on stderr and returns kExitSetupFailed.
int ReportSetupError(const Error& error);

// Rejects flags that contradict --worktree (before the config is loaded), and warns on stderr
// when the sandbox is off (`what`: "running" or "serving").
[[nodiscard]] Result<void> CheckWorktreeFlags(const SandboxFlags& flags, bool worktree);
void WarnWhenUnsandboxed(const Config& config, bool worktree, const char* what);

struct ResolvedWorkspace {
  std::filesystem::path path;                      // the writable root handed to the Session
  std::optional<worktree::LinkedWorktree> linked;  // set in worktree mode
  bool is_cwd = false;  // the current directory itself (no --workspace, no worktree)
};

// For a workspace that is the current directory: the Session pinned this very directory, not
// whatever its name reached while cordon started (a name swapped for a link by anything that
// can write its parent). kUnavailable naming the workspace otherwise.
[[nodiscard]] Result<void> CheckSessionIsHere(const Session& session,
                                              const ResolvedWorkspace& workspace);

// The workspace: `workspace_flag` (--workspace) or the current directory. In worktree mode it
// must be (inside) a linked git worktree, whose root becomes the workspace, and `config` is
// tightened to the strict policy (dropped writable roots are named on stderr).
[[nodiscard]] Result<ResolvedWorkspace> ResolveWorkspace(Config& config,
                                                         const std::string& workspace_flag,
                                                         bool worktree);

// `cordon status`'s human form of the capabilities payload, on stdout.
void PrintCapabilities(const Capabilities& capabilities);

}  // namespace cordon::cli
