// `cordon __generate man|bash|zsh [--output FILE]` (hidden): prints the man page or a completion
// script generated from this binary's own command-line definitions. The build runs it
// (src/cli/CMakeLists.txt) and the install rules ship its output.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "cli/manual.h"
#include "cli/subcommands.h"

namespace cordon::cli {
namespace {

struct GenerateOptions {
  std::string what;
  std::string output;
};

int RunGenerate(const CLI::App& root, const GenerateOptions& options) {
  std::string text;
  if (options.what == "man") {
    text = ManPage(root, CORDON_VERSION);
  } else if (options.what == "bash") {
    text = BashCompletion(root);
  } else if (options.what == "zsh") {
    text = ZshCompletion(root);
  } else {
    fmt::print(stderr, "cordon: __generate: expected man, bash or zsh, found \"{}\"\n",
               options.what);
    return kExitSetupFailed;
  }
  if (options.output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream out(options.output, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    fmt::print(stderr, "cordon: __generate: cannot write {}\n", options.output);
    return kExitSetupFailed;
  }
  return 0;
}

}  // namespace

Subcommand AddGenerateCommand(CLI::App& root) {
  CLI::App* app = root.add_subcommand(
      "__generate", "Print the man page or a shell completion script (used by the build)");
  app->group("");  // hidden from --help, the man page and the completions
  auto options = std::make_shared<GenerateOptions>();
  app->add_option("what", options->what, "man, bash or zsh")->required();
  app->add_option("--output,-o", options->output, "Write to FILE instead of stdout");
  return {app, [&root, options] { return RunGenerate(root, *options); }};
}

}  // namespace cordon::cli
