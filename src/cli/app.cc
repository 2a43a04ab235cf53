#include <fmt/format.h>

#include <cstdio>

#include "cli/command_line.h"
#include "cli/manual.h"

namespace cordon::cli {

std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

std::vector<const CLI::Option*> VisibleOptions(const CLI::App& app) {
  return app.get_options([](const CLI::Option* opt) { return !opt->get_group().empty(); });
}

std::unique_ptr<CommandLine> MakeCommandLine() {
  auto cl = std::make_unique<CommandLine>();
  CLI::App& app = cl->app;
  app.set_version_flag("--version", std::string(CORDON_VERSION));
  app.require_subcommand(1);
  app.add_option("--config", cl->global.config_path,
                 "User config file (default: $XDG_CONFIG_HOME/cordon/config.json)")
      ->type_name("FILE");

  cl->subcommands = {
      AddRunCommand(app, cl->global),    AddCheckCommand(app, cl->global),
      AddStatusCommand(app, cl->global), AddSandboxCommand(app, cl->global),
      AddMcpCommand(app, cl->global),    AddDoctorCommand(app, cl->global),
      AddGenerateCommand(app),
  };
#if defined(CORDON_RUN_SERVER)
  cl->subcommands.push_back(AddServeCommand(app, cl->global));
#endif
  for (Subcommand& s : cl->subcommands) s.app->fallthrough();

  // After the subcommands: CLI11 copies a parent's footer into subcommands created later.
  std::string footer = "Exit status:";
  for (const ExitCodeDoc& row : kExitCodes)
    footer += fmt::format("\n  {:<6} {}", row.code, row.meaning);
  footer += "\nMore: man cordon, docs/cli.md.";
  app.footer(footer);
  return cl;
}

int Main(int argc, char** argv) {
  std::unique_ptr<CommandLine> cl = MakeCommandLine();
  CLI::App& app = cl->app;
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
  for (Subcommand& s : cl->subcommands) {
    if (s.app->parsed()) return s.run();
  }
  return kExitSetupFailed;
}

}  // namespace cordon::cli
