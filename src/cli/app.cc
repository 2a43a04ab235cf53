#include <fmt/format.h>

#include <cstdio>
#include <string_view>

#include "cli/command_line.h"
#include "cli/manual.h"
#include "cli/parse_errors.h"

namespace cordon::cli {

std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

std::vector<const CLI::Option*> VisibleOptions(const CLI::App& app) {
  return app.get_options([](const CLI::Option* opt) { return !opt->get_group().empty(); });
}

namespace {

struct Builder {
  std::string_view name;
  Subcommand (*add)(CLI::App&, const GlobalOptions&);
};

// In --help order.
constexpr Builder kBuilders[] = {
    {"run", AddRunCommand},
    {"check", AddCheckCommand},
    {"status", AddStatusCommand},
    {"sandbox", AddSandboxCommand},
    {"cache", AddCacheCommand},
    {"git", AddGitCommand},
    {"mcp", AddMcpCommand},
    {"doctor", AddDoctorCommand},
    {"hook", AddHookCommand},
    {"__generate", [](CLI::App& app, const GlobalOptions&) { return AddGenerateCommand(app); }},
#if defined(CORDON_RUN_SERVER)
    {"serve", AddServeCommand},
#endif
};

}  // namespace

void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.set_version_flag("--version", std::string(CORDON_VERSION));
  app.require_subcommand(1);
  app.add_option("--config", global.config_path,
                 "User config file (default: $XDG_CONFIG_HOME/cordon/config.json)")
      ->type_name("FILE");
}

std::unique_ptr<CommandLine> MakeCommandLine(std::string_view only) {
  auto cl = std::make_unique<CommandLine>();
  CLI::App& app = cl->app;
  AddGlobalOptions(app, cl->global);

  for (const Builder& builder : kBuilders) {
    if (only.empty() || only == builder.name) {
      cl->subcommands.push_back(builder.add(app, cl->global));
    }
  }
  for (Subcommand& s : cl->subcommands) s.app->fallthrough();

  // After the subcommands: CLI11 copies a parent's footer into subcommands created later.
  std::string footer = "Exit status:";
  for (const ExitCodeDoc& row : kExitCodes)
    footer += fmt::format("\n  {:<6} {}", row.code, row.meaning);
  footer += "\nMore: man cordon, docs/cli.md.";
  app.footer(footer);
  return cl;
}

// The first argument, past --config and its value, or "" when there is none; `option`: it is
// an option (--help, --version, a mistake).
std::string_view FirstArgument(int argc, char** argv, bool* option) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--config") {
      ++i;  // its value
      continue;
    }
    if (arg.starts_with("--config=")) continue;
    *option = arg.starts_with('-');
    return arg;
  }
  return {};
}

std::string_view RequestedSubcommand(int argc, char** argv) {
  bool option = false;
  const std::string_view arg = FirstArgument(argc, argv, &option);
  // An option: the whole tree; __generate walks the whole tree (man page, completions).
  if (option || arg == "__generate") return {};
  for (const Builder& builder : kBuilders) {
    if (arg == builder.name) return builder.name;
  }
  return {};
}

int Main(int argc, char** argv) {
  // Only the subcommand asked for: building every definition is a large part of what a
  // `cordon run` that hands its command to a run server costs itself.
  const std::string_view requested = RequestedSubcommand(argc, argv);
  std::unique_ptr<CommandLine> cl = MakeCommandLine(requested);
  CLI::App& app = cl->app;
  cl->global.command_line.assign(argv, argv + argc);
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
    bool option = false;
    const std::string_view first = FirstArgument(argc, argv, &option);
    fmt::print(stderr, "cordon: {}\n",
               DescribeParseError(e, requested, option || requested == first ? "" : first));
    return kExitSetupFailed;
  }
  for (Subcommand& s : cl->subcommands) {
    if (s.app->parsed()) return s.run();
  }
  return kExitSetupFailed;
}

}  // namespace cordon::cli
