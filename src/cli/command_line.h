// The whole CLI11 definition of the cordon command line, built in one place so that --help, the
// man page and the shell completions (`cordon __generate`, docs/cli.md) all walk the same tree
// and cannot drift apart.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "cli/subcommands.h"

namespace cordon::cli {

struct CommandLine {
  CLI::App app{
      "cordon: runs the shell commands an AI coding agent asks for behind a command policy and "
      "an OS sandbox",
      "cordon"};
  GlobalOptions global;
  std::vector<Subcommand> subcommands;  // in the order they were added
};

// The root's own options (--version, --config) and its rule of exactly one subcommand.
void AddGlobalOptions(CLI::App& app, GlobalOptions& global);

// Every subcommand, option and flag, with the hidden `__generate` subcommand; with `only`, the
// root and that one subcommand (what Main builds for an argv that names it). The actions
// capture the CommandLine, so it lives on the heap and must outlive the parse.
std::unique_ptr<CommandLine> MakeCommandLine(std::string_view only = {});

// The subcommand `argv` asks for, skipping the root's --config option: its name when it is one
// of cordon's, empty when the first other word is an option (--help, --version) or unknown.
// Parsing with only that subcommand defined gives the same result as with all of them.
std::string_view RequestedSubcommand(int argc, char** argv);

// The subcommands and options a person sees (hidden ones, in the empty group, are skipped).
std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app);
std::vector<const CLI::Option*> VisibleOptions(const CLI::App& app);

}  // namespace cordon::cli
