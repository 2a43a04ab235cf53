// `cordon status [--json] [flags]`: the capabilities payload — what a session with this
// configuration would enforce on this machine, layer by layer, and what is missing.
#include <fmt/format.h>

#include <cstdio>

#include "cli/subcommands.h"
#include "cordon/session.h"
#include "report/json_report.h"

namespace cordon::cli {
namespace {

struct StatusOptions {
  SandboxFlags flags;
  bool json = false;
};

int RunStatusCommand(const GlobalOptions& global, const StatusOptions& options) {
  auto config = LoadConfig(global, options.flags);
  if (!config) return ReportSetupError(config.error());
  std::error_code ec;
  auto here = std::filesystem::current_path(ec);
  if (ec) here = "/";
  auto session = Session::Create(*std::move(config), here);
  if (!session) return ReportSetupError(session.error());
  const Capabilities caps = session->GetCapabilities();
  if (options.json) {
    fmt::print("{}\n", report::Dump(report::CapabilitiesToJson(caps), 2));
  } else {
    PrintCapabilities(caps);
  }
  return 0;
}

}  // namespace

Subcommand AddStatusCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "status", "Show what the sandbox enforces on this machine with this configuration");
  auto options = std::make_shared<StatusOptions>();
  AddSandboxFlags(*app, options->flags);
  app->add_flag("--json", options->json, "Print the capabilities payload as JSON");
  return {app, [&global, options] { return RunStatusCommand(global, *options); }};
}

}  // namespace cordon::cli
