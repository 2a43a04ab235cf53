// `cordon doctor [sandbox flags] [--json]`: each kernel feature cordon uses, whether it works
// here, what cordon loses without it and how to fix it (docs/cli.md). Exit 0 when every feature
// the configured guarantees need is present, 1 when one is missing, 125 for bad flags/config.
#include <fmt/format.h>

#include <cstdio>

#include "cli/doctor_report.h"
#include "cli/host_facts.h"
#include "cli/subcommands.h"
#include "linux/kernel_features.h"
#include "report/json_report.h"

namespace cordon::cli {
namespace {

struct DoctorOptions {
  SandboxFlags flags;
  bool json = false;
};

int RunDoctor(const GlobalOptions& global, const DoctorOptions& options) {
  auto config = LoadConfig(global, options.flags);
  if (!config) return ReportSetupError(config.error());
  // The same probe a Session takes, so doctor sees what `cordon run` would see.
  linux_native::KernelFeatures features =
      linux_native::ProbeKernelThoroughly();  // doctor tries every kind
  features.limits = limits::ProbeLimits();    // cgroups too, whatever the config sets
  const HostFacts host = ReadHostFacts();
  const DoctorReport report = BuildDoctorReport(*config, features, host);
  if (options.json) {
    fmt::print("{}\n", report::Dump(DoctorReportToJson(report, *config, features, host), 2));
  } else {
    fmt::print("{}", FormatDoctorReport(report, *config, features, host));
  }
  return report.ok ? 0 : kExitDoctorMissing;
}

}  // namespace

Subcommand AddDoctorCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "doctor",
      "Check each kernel feature cordon uses: present or not, what is lost without it, the fix");
  auto options = std::make_shared<DoctorOptions>();
  AddSandboxFlags(*app, options->flags);
  app->add_flag("--json", options->json, "Print the findings as JSON");
  return {app, [&global, options] { return RunDoctor(global, *options); }};
}

}  // namespace cordon::cli
