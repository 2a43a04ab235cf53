// `cordon run [flags] -- CMD ARGS...` or `cordon run [flags] -c 'shell text'`: run one command
// under the policy and the sandbox. Output streams through to the terminal (or is collected and
// printed as one JSON object with --json). Exit: the command's own code; 124 timeout; 125
// cordon could not set up; 126 denied by policy (or not executable); 127 command not found;
// 128+N killed by signal N.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "cli/command_line.h"
#include "cli/option_values.h"
#include "cli/subcommands.h"
#include "cli/terminal_state.h"
#include "cli/tty_approval.h"
#include "config/enums.h"
#include "config/validate.h"
#include "cordon/session.h"
#include "core/paths.h"
#include "policy/shell_quote.h"
#include "report/run_outcome.h"
#if defined(CORDON_RUN_SERVER)
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <array>
#include <cstdlib>
#include <optional>

#include "config/to_json.h"
#include "core/unique_fd.h"
#include "server/autostart.h"
#include "server/client.h"
#include "server/server.h"
#include "session/request.h"

extern char** environ;
#endif

namespace cordon::cli {
namespace {

struct RunOptions {
  SandboxFlags flags;
  std::string workspace;
  std::string shell_text;
  std::vector<std::string> argv;
  bool json = false;
  bool worktree = false;
  bool outside_sandbox = false;
  bool no_server = false;
  bool no_stdin = false;
  bool quiet = false;  // no line per denial on stderr
  std::string justification;
};

// Whether the command reads `fd` (the caller's stdin) as its own (docs/cli.md): a terminal
// (not with --json: nobody answers a prompt in a collected run), a pipe, a file or a socket
// (the session copies those into a pipe of the command's, exec/stdin_relay.h). Otherwise, and
// with --no-stdin, /dev/null.
bool CommandReadsStdin(int fd, const RunOptions& options) {
  struct stat st {};
  if (options.no_stdin || ::fstat(fd, &st) != 0) return false;
  if (::isatty(fd) != 0) return !options.json;
  return S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode);
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // our own stdout is gone; keep supervising, the result still counts
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

// The command starts in the caller's directory (`here`) when that lies inside the workspace,
// otherwise in the workspace itself. The writable root is always the workspace, never `here`.
std::filesystem::path ChooseCwd(const std::filesystem::path& workspace,
                                const std::filesystem::path& here) {
  if (here.empty()) return workspace;
  auto canonical = core::Canonical(here);
  if (canonical && core::IsWithin(*canonical, workspace)) return *canonical;
  return workspace;
}

std::string CommandText(const RunOptions& options) {
  return options.shell_text.empty() ? policy::ShellQuote(options.argv) : options.shell_text;
}

// ADR 0064 on the terminal: refuse unless the operator allows escapes, the policy allows the
// command, and a person at the terminal approves it. Returns 0 when approved, else the exit code.
int CheckEscapeAllowed(const Config& config, const RunOptions& options) {
  const std::string text = CommandText(options);
  if (options.worktree) {
    fmt::print(stderr, "cordon: --outside-sandbox cannot be combined with --worktree\n");
    return kExitSetupFailed;
  }
  if (!config.sandbox.allow_outside_sandbox) {
    fmt::print(stderr,
               "cordon: refused: running outside the sandbox is turned off "
               "(sandbox.allow_outside_sandbox is false); nothing ran\n");
    return kExitDenied;
  }
  // The policy applies to escapes too, and is checked before anyone is asked.
  auto policy = Policy::Create(config.command_policy);
  if (!policy) return ReportSetupError(policy.error());
  if (const Decision d = policy->Evaluate(text); !d.allowed()) {
    fmt::print(stderr, "cordon: denied by policy [{}]: {}\n", d.rule_id, d.reason);
    return kExitDenied;
  }
  switch (AskOnTerminal(text, options.justification)) {
    case Approval::kApproved:
      return 0;
    case Approval::kDeclined:
      fmt::print(stderr, "cordon: refused: not approved; nothing ran\n");
      return kExitDenied;
    case Approval::kNoTerminal:
      fmt::print(stderr,
                 "cordon: refused: --outside-sandbox needs a person to approve it on a terminal, "
                 "and there is none; nothing ran\n");
      return kExitDenied;
  }
  return kExitDenied;
}

#if defined(CORDON_RUN_SERVER)
// Hands the command line to this user's run server when one is listening and can be trusted
// (decision 0026): its sessions have the sandbox prepared. The server resolves it as this
// process would (ResolveRunInvocation), from the same invocation the `cordon` front sends.
// nullopt: not served, nothing ran. With `use` kAuto, a run that finds no server starts one
// for the next runs (decision 0030).
std::optional<int> TryRunServer(const GlobalOptions& global, server::ServerUse use) {
  const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
  const server::ServerPaths paths = server::DefaultServerPaths(
      runtime_dir != nullptr ? std::optional<std::string>(runtime_dir) : std::nullopt);
  if (!server::MayBeListening(paths)) {
    if (use == server::ServerUse::kAuto) server::StartServerInBackground(paths);
    return std::nullopt;
  }
  // The server is handed this process's stdin, stdout and stderr: all three must be open.
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) return std::nullopt;
  }
  server::Invocation invocation;
  invocation.cwd = ThisProcess().cwd.string();
  if (!invocation.cwd.starts_with('/')) return std::nullopt;
  invocation.argv = global.command_line;
  invocation.env = session::CallerEnvironment();
  const server::ClientResult result = server::RunThroughServer(paths, invocation);
  if (!result.warning.empty()) {
    fmt::print(stderr,
               "cordon: {}; running the command in this process instead (sandboxed as "
               "always)\n",
               result.warning);
  }
  if (result.none_running && use == server::ServerUse::kAuto) {
    server::StartServerInBackground(paths);
  }
  if (!result.served) return std::nullopt;
  return result.exit_code;
}
#endif

int RunRun(const GlobalOptions& global, const RunOptions& options) {
  if (options.shell_text.empty() == options.argv.empty()) {
    fmt::print(stderr, "cordon: run needs either -c 'shell text' or a command after --\n");
    return kExitSetupFailed;
  }
  if (auto flags = CheckWorktreeFlags(options.flags, options.worktree); !flags) {
    return ReportSetupError(flags.error());
  }
#if defined(CORDON_RUN_SERVER)
  // Checked first: a bad value must not cost anyone an approval on the terminal.
  const char* use_setting = std::getenv("CORDON_RUN_SERVER");
  Result<server::ServerUse> use = server::ParseServerUse(
      use_setting != nullptr ? std::optional<std::string>(use_setting) : std::nullopt);
  if (!use) return ReportSetupError(use.error());
#endif
  auto config = LoadConfig(global, options.flags);
  if (!config) return ReportSetupError(config.error());
  WarnWhenUnsandboxed(*config, options.worktree, "running");
  auto workspace = ResolveWorkspace(*config, options.workspace, options.worktree);
  if (!workspace) return ReportSetupError(workspace.error());
  if (options.outside_sandbox) {
    if (int refused = CheckEscapeAllowed(*config, options); refused != 0) return refused;
    // The person approved this one command: it runs once, unconfined (the policy still
    // applied above); nothing is remembered for the next run.
    config->sandbox.mode = SandboxMode::kOff;
    fmt::print(stderr, "cordon: WARNING: approved: running this one command outside the sandbox\n");
  }
  // Whatever the command does to the caller's terminal is undone when it ends (sandboxed or
  // not, served or not).
  const TerminalState terminal;
#if defined(CORDON_RUN_SERVER)
  // Unsandboxed commands (mode off, --outside-sandbox) run here: a server would run them with
  // whatever of its own process context /proc does not show (decision 0030).
  if (!options.no_server && !options.worktree && !options.outside_sandbox &&
      config->sandbox.mode != SandboxMode::kOff && *use != server::ServerUse::kOff) {
    if (std::optional<int> served = TryRunServer(global, *use)) {
      return *served;
    }
  }
#endif
  auto session = Session::Create(*std::move(config), workspace->path,
                                 SessionOptions{.runtime_dir = RuntimeDirectory()});
  if (!session) return ReportSetupError(session.error());
  if (Result<void> here = CheckSessionIsHere(*session, *workspace); !here) {
    return ReportSetupError(here.error());
  }

  CommandRequest request;
  if (!options.shell_text.empty()) {
    request.shell_text = options.shell_text;
  } else {
    request.argv = options.argv;
  }
  request.cwd = ChooseCwd(session->workspace(), ThisProcess().cwd);
  if (CommandReadsStdin(STDIN_FILENO, options)) request.stdin_fd = STDIN_FILENO;

  if (!options.json) {
    // Streamed through (spliced where our stdout is a pipe or a file), never printed again.
    request.stdout_fd = STDOUT_FILENO;
    request.stderr_fd = STDERR_FILENO;
    request.capture_output = false;
  }
  const RunResult result = session->Run(request);
  const report::RunOutcome outcome = report::RenderRunOutcome(
      result, options.json, session->config().limits.timeout, !options.quiet);
  std::fflush(stdout);
  WriteAll(STDOUT_FILENO, outcome.stdout_text);
  WriteAll(STDERR_FILENO, outcome.stderr_text);
  return outcome.exit_code;
}

}  // namespace

void AddSandboxFlags(CLI::App& app, SandboxFlags& flags) {
  // The {a,b} type names are what --help shows and where the man page and the completions
  // take the choices from; the values themselves are checked by config::Parse*.
  app.add_option("--mode,-m", flags.mode, "Sandbox mode: off, read_only, workspace_write")
      ->type_name(ChoiceTypeName(config::kSandboxModeNames));
  app.add_option("--network", flags.network,
                 "Child network access: deny, allow, or domains (only the allowed domains)")
      ->type_name(ChoiceTypeName(config::kNetworkPolicyNames));
  app.add_option("--allow-domain", flags.allow_domains,
                 "With network domains: a host name (*.example.org, :PORT), address or @list "
                 "the command may reach, added to the config's (repeatable; selects domains)")
      ->type_name("DOMAIN")
      ->allow_extra_args(false);
  app.add_option("--deny-domain", flags.deny_domains,
                 "With network domains: a host name, address or @list the command may not "
                 "reach, even when allowed (repeatable)")
      ->type_name("DOMAIN")
      ->allow_extra_args(false);
  app.add_option("--backend", flags.backend, "Sandbox backend: auto, native, bwrap, seatbelt")
      ->type_name(ChoiceTypeName(config::kBackendChoiceNames));
  // One path per flag: a vector option would otherwise also swallow the words after it
  // (`--writable-root P -- CMD` lost the command).
  app.add_option("--writable-root", flags.writable_roots,
                 "An extra existing path the command may write (repeatable)")
      ->type_name("PATH")
      ->allow_extra_args(false);
  app.add_option("--home", flags.home,
                 "The real homes: read_only (visible), hidden (only granted paths are visible)")
      ->type_name(ChoiceTypeName(config::kHomeViewNames));
  app.add_option("--tool-caches", flags.tool_caches,
                 "The tools' caches across commands: shared (one per user), workspace (one per "
                 "workspace) or off (each command starts cold)")
      ->type_name(ChoiceTypeName(config::kToolCachesNames));
  app.add_option("--readable", flags.readable_paths,
                 "A path inside a hidden home the command may read (repeatable)")
      ->type_name("PATH")
      ->allow_extra_args(false);
  app.add_option("--timeout", flags.timeout_seconds, "Wall-clock limit in seconds")
      ->type_name("SECONDS")
      ->check(SecondsValue(config::kMaxTimeoutSeconds));
  // The resource limits (docs/limits.md); 0 removes the config file's limit. A limit this
  // machine cannot enforce refuses the run.
  app.add_option("--memory", flags.memory_bytes,
                 "Memory limit of the whole process tree, e.g. 512M or 2G (cgroup)")
      ->type_name("BYTES")
      ->transform(SizeValue());
  app.add_option("--processes", flags.processes,
                 "Most processes and threads the command may have at once")
      ->type_name("N")
      ->check(CountValue());
  app.add_option("--open-files", flags.open_files,
                 "Open-file limit of each process (RLIMIT_NOFILE)")
      ->type_name("N")
      ->check(CountValue());
  app.add_option("--cpu-seconds", flags.cpu_seconds, "CPU time limit of each process (RLIMIT_CPU)")
      ->type_name("SECONDS")
      ->check(CountValue());
  app.add_flag("--unsafe", flags.unsafe, "Run without a sandbox (mode off); prints a warning");
}

namespace {

CLI::App* DefineRunCommand(CLI::App& root, RunOptions& options) {
  CLI::App* app = root.add_subcommand("run", "Run one command under the policy and the sandbox");
  AddSandboxFlags(*app, options.flags);
  app->add_option("--workspace,-w", options.workspace,
                  "The writable workspace (default: the current directory)")
      ->type_name("DIR");
  app->add_option("-c", options.shell_text, "Shell text, run as /bin/sh -c TEXT")
      ->type_name("TEXT");
  app->add_flag("--json", options.json, "Collect output and print one JSON result");
  app->add_flag("--outside-sandbox", options.outside_sandbox,
                "Ask the person at the terminal to approve running this one command without "
                "the sandbox (ADR 0064); refused without a terminal");
  app->add_option("--justification", options.justification,
                  "Why the command must run outside the sandbox (shown to the person)")
      ->type_name("TEXT");
  app->add_option("command", options.argv, "The command and its arguments, after --")
      ->type_name("COMMAND");
  app->add_flag("--quiet", options.quiet,
                "No line on stderr for what the sandbox refused (--json still lists it)");
  app->add_flag("--no-stdin", options.no_stdin,
                "The command reads nothing on stdin (/dev/null), whatever cordon's stdin is");
  app->add_flag("--no-server", options.no_server,
                "Run in this process: neither use a run server (`cordon serve`) nor start one");
  app->add_flag("--worktree", options.worktree,
                "Worktree mode: the workspace must be a linked git worktree, the only writable "
                "root (docs/mcp.md)");
  return app;
}

}  // namespace

Subcommand AddRunCommand(CLI::App& root, const GlobalOptions& global) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* app = DefineRunCommand(root, *options);
  return {app, [&global, options] { return RunRun(global, *options); }};
}

#if defined(CORDON_RUN_SERVER) && defined(__linux__)  // the run server is Linux-only
namespace {

// The canonical path of the directory `fd` (as the kernel names it) and its stat; nullopt
// when `fd` is not an open directory reachable from the root.
std::optional<std::pair<std::filesystem::path, struct stat>> DirectoryOf(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_nlink == 0) {
    return std::nullopt;  // not a directory, or one removed ("... (deleted)")
  }
  std::array<char, PATH_MAX> path{};
  const std::string link = fmt::format("/proc/self/fd/{}", fd);
  const ssize_t n = ::readlink(link.c_str(), path.data(), path.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= path.size() || path[0] != '/') return std::nullopt;
  return std::make_pair(
      std::filesystem::path(std::string(path.data(), static_cast<std::size_t>(n))), st);
}

// `argv` parsed as Main would (root options, the run subcommand alone). The definition is
// built once per process and reused (building it costs more than parsing), one parse at a time.
bool ParseRunCommandLine(const std::vector<std::string>& argv, GlobalOptions& global,
                         RunOptions& options) {
  struct Parser {
    std::mutex mutex;
    CLI::App root;
    GlobalOptions global;
    RunOptions options;
    CLI::App* run = nullptr;
    Parser() {
      AddGlobalOptions(root, global);
      run = DefineRunCommand(root, options);
      run->fallthrough();
    }
  };
  static Parser parser;
  std::vector<const char*> args;
  for (const std::string& arg : argv) args.push_back(arg.c_str());
  std::lock_guard lock(parser.mutex);
  // clear() forgets the last parse; the variables the options write to are reset here.
  parser.root.clear();
  parser.global = GlobalOptions{};
  parser.options = RunOptions{};
  try {
    parser.root.parse(static_cast<int>(args.size()), args.data());
  } catch (const std::exception&) {
    return false;  // --help, --version, a bad flag: the full cordon says what it says
  }
  if (!parser.run->parsed()) return false;
  global = parser.global;
  options = parser.options;
  return true;
}

}  // namespace

std::optional<server::ResolvedInvocation> ResolveRunInvocation(const server::Invocation& invocation,
                                                               int cwd_fd, int stdin_fd) {
  // Only `cordon [--config FILE] run ...`: anything else (another subcommand, --help) is the
  // full cordon's to run, with every message it prints.
  GlobalOptions global;
  RunOptions options;
  if (!ParseRunCommandLine(invocation.argv, global, options)) return std::nullopt;
  // What RunRun would refuse, or does in the caller's process (worktree set-up, the terminal
  // approval), or warns about (mode off) is left to the full cordon.
  if (options.shell_text.empty() == options.argv.empty() || options.worktree ||
      options.outside_sandbox || options.no_server) {
    return std::nullopt;
  }
  Caller caller;
  caller.cwd = invocation.cwd;
  for (const std::string& entry : invocation.env) {
    if (entry.starts_with("HOME=") && !caller.env.home) caller.env.home = entry.substr(5);
    if (entry.starts_with("XDG_CONFIG_HOME=") && !caller.env.xdg_config_home) {
      caller.env.xdg_config_home = entry.substr(16);
    }
    // A setting the full cordon refuses is its to report (the front passes on all but "off").
    if (entry.starts_with("CORDON_RUN_SERVER=") && !server::ParseServerUse(entry.substr(18))) {
      return std::nullopt;
    }
  }
  Result<Config> config = LoadConfig(global, options.flags, caller);
  if (!config || config->sandbox.mode == SandboxMode::kOff) return std::nullopt;
  Result<std::string> config_key = config::ToJsonChecked(*config);
  if (!config_key) return std::nullopt;
  // The workspace as a directory, not a name: the caller's directory itself, or --workspace
  // opened through it (a relative one) or from the root (an absolute one), following links
  // as the full cordon's canonical path would. The session must pin this very directory.
  // One that does not open is the full cordon's to report.
  const std::string& flag = options.workspace;
  const core::UniqueFd opened(
      flag.empty() ? ::fcntl(cwd_fd, F_DUPFD_CLOEXEC, 0)
                   : ::openat(cwd_fd, flag.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::optional<std::pair<std::filesystem::path, struct stat>> workspace =
      DirectoryOf(opened.get());
  if (!workspace) return std::nullopt;
  server::RunRequest request;
  request.config_key = std::move(*config_key);
  request.workspace = workspace->first;
  request.workspace_dev = static_cast<std::uint64_t>(workspace->second.st_dev);
  request.workspace_ino = static_cast<std::uint64_t>(workspace->second.st_ino);
  if (!options.shell_text.empty()) {
    request.shell_text = options.shell_text;
  } else {
    request.argv = options.argv;
  }
  request.cwd = ChooseCwd(request.workspace, caller.cwd);
  request.json = options.json;
  request.quiet = options.quiet;
  request.has_stdin = CommandReadsStdin(stdin_fd, options);
  request.env = invocation.env;
  // session::CallerHome(), for the caller: its HOME when absolute, else the user's entry.
  request.home = caller.env.home && caller.env.home->starts_with('/')
                     ? *caller.env.home
                     : session::PasswdHome().string();
  const std::chrono::milliseconds timeout = config->limits.timeout;
  request.config = *std::move(config);
  return server::ResolvedInvocation{std::move(request), timeout};
}
#endif

}  // namespace cordon::cli
