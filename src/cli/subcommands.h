// Each subcommand registers its options on the CLI11 app and returns the action to run when it
// was selected. One file per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>

#include "cli/cli_common.h"
#if defined(CORDON_RUN_SERVER)
#include <optional>

#include "server/server.h"
#endif

namespace cordon::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Adds --mode, --network, --backend, --writable-root, --timeout, the resource limits
// (--memory, --processes, --open-files, --cpu-seconds) and --unsafe to `app`.
void AddSandboxFlags(CLI::App& app, SandboxFlags& flags);

Subcommand AddCheckCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddRunCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddStatusCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddSandboxCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddCacheCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddGitCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddMcpCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddDoctorCommand(CLI::App& root, const GlobalOptions& global);
Subcommand AddHookCommand(CLI::App& root, const GlobalOptions& global);
// Linux only (CORDON_RUN_SERVER): the run server.
Subcommand AddServeCommand(CLI::App& root, const GlobalOptions& global);
#if defined(CORDON_RUN_SERVER)
// The run server's InvocationResolver (decisions 0028, 0033): a client's `cordon run ...`
// command line, parsed and resolved as `cordon run` itself would in the client's directory
// (`cwd_fd`) and environment.
std::optional<server::ResolvedInvocation> ResolveRunInvocation(const server::Invocation& invocation,
                                                               int cwd_fd, int stdin_fd);
#endif
// Hidden: `cordon __generate man|bash|zsh [--output FILE]` walks `root` (docs/cli.md).
Subcommand AddGenerateCommand(CLI::App& root);

int Main(int argc, char** argv);

}  // namespace cordon::cli
