#include <fmt/format.h>

#include <cstdio>

#include "cli/subcommands.h"

namespace cordon::cli {

int Main(int argc, char** argv) {
  CLI::App app{
      "cordon: runs the shell commands an AI coding agent asks for behind a command policy and "
      "an OS sandbox",
      "cordon"};
  app.set_version_flag("--version", std::string(CORDON_VERSION));
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--config", global.config_path,
                 "User config file (default: $XDG_CONFIG_HOME/cordon/config.json)");

  std::vector<Subcommand> subcommands = {
      AddRunCommand(app, global),     AddCheckCommand(app, global), AddStatusCommand(app, global),
      AddSandboxCommand(app, global), AddMcpCommand(app, global),
  };
  for (Subcommand& s : subcommands) s.app->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Bad flags are a setup error like a bad config: nothing runs.
    fmt::print(stderr, "cordon: {}\nRun 'cordon --help' for usage.\n", e.what());
    return kExitSetupFailed;
  }
  for (Subcommand& s : subcommands) {
    if (s.app->parsed()) return s.run();
  }
  return kExitSetupFailed;
}

}  // namespace cordon::cli
