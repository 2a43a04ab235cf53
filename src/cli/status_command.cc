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

const char* YesNo(bool value) { return value ? "yes" : "no"; }

void PrintHuman(const Capabilities& c) {
  const Enforcement& e = c.enforcement;
  fmt::print("mode:                 {}\n", SandboxModeName(c.mode));
  fmt::print("network:              {}\n", NetworkPolicyName(c.network));
  fmt::print("backend:              {} ({})\n", c.backend, c.backend_reason);
  fmt::print("filesystem enforced:  {}\n", YesNo(c.filesystem_enforced));
  fmt::print("network enforced:     {}\n", c.network == NetworkPolicy::kAllow
                                               ? "not requested (network allowed)"
                                               : YesNo(c.network_enforced));
  fmt::print("layers:\n");
  fmt::print("  user namespace      {}\n", YesNo(e.user_namespace));
  fmt::print("  mount namespace     {}\n", YesNo(e.mount_namespace));
  fmt::print("  pid namespace       {}\n", YesNo(e.pid_namespace));
  fmt::print("  net namespace       {}\n", YesNo(e.net_namespace));
  fmt::print("  ipc namespace       {}\n", YesNo(e.ipc_namespace));
  fmt::print("  landlock            {}\n",
             e.landlock_abi > 0 ? fmt::format("ABI {}", e.landlock_abi) : std::string("no"));
  fmt::print("  seccomp             {}\n", YesNo(e.seccomp));
  fmt::print("  capabilities drop   {}\n", YesNo(e.capabilities_dropped));
  fmt::print("  no_new_privs        {}\n", YesNo(e.no_new_privs));
  for (const std::string& m : c.missing) fmt::print("MISSING: {}\n", m);
  for (const std::string& u : c.unsupported) fmt::print("not supported: {}\n", u);
  fmt::print("{}\n", c.can_run() ? "commands can run with this configuration"
                                 : "commands are REFUSED with this configuration (fail closed)");
}

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
    PrintHuman(caps);
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
