// The human form of `cordon doctor`: one block per feature (present or MISSING, required or
// not, what cordon uses it for, what it loses without it, the fixes), then the Landlock ABI
// levels, the sysctls read, and the verdict.
#include <fmt/format.h>

#include "cli/doctor_report.h"

namespace cordon::cli {
namespace {

void Indent(std::string& out, const std::string& label, const std::string& text) {
  // Continuation lines of a multi-line fix keep the label's indentation.
  std::string body;
  for (char c : text) {
    body += c;
    if (c == '\n') body += std::string(12 + label.size(), ' ');
  }
  out += fmt::format("          {}{}\n", label, body);
}

}  // namespace

std::string FormatDoctorReport(const DoctorReport& report, const Config& config,
                               const linux_native::KernelFeatures& f, const HostFacts& host) {
  std::string out = fmt::format(
      "cordon doctor: Linux {}, uid {}{}; configuration: mode {}, network {}, backend {}\n\n",
      host.kernel_release, host.uid,
      host.container.empty() ? "" : fmt::format(", in a container ({})", host.container),
      SandboxModeName(config.sandbox.mode), NetworkPolicyName(config.sandbox.network),
      BackendChoiceName(config.sandbox.backend));
  if (host.seccomp_mode == 2) {
    out += fmt::format(
        "note: cordon itself runs under {} seccomp filter(s) (a container, a systemd unit or "
        "an outer sandbox)\n\n",
        host.seccomp_filters);
  }
  for (const FeatureCheck& c : report.features) {
    out += fmt::format("{:<9} {}{}: {}\n", c.present ? "[ok]" : "[MISSING]", c.name,
                       c.required ? " (required)" : "", c.detail);
    Indent(out, "used for:   ", c.used_for);
    Indent(out, "without it: ", c.without);
    for (const std::string& fix : c.fixes) Indent(out, "fix:        ", fix);
  }

  out += fmt::format("\nLandlock ABI levels (this kernel: {}{}):\n", f.landlock_abi,
                     report.landlock_abi_required > 0 ? fmt::format("; this configuration needs {}",
                                                                    report.landlock_abi_required)
                                                      : "");
  for (const LandlockLevel& level : kLandlockLevels) {
    out += fmt::format("  {} {} (Linux {}): {}\n", f.landlock_abi >= level.abi ? "yes" : "no ",
                       level.abi, level.linux_version, level.adds);
  }

  out += "\nsysctls (/proc/sys):\n";
  for (const auto& [name, value] : host.sysctls) {
    out += fmt::format("  {} = {}\n", name, value ? *value : "(not on this kernel)");
  }
  if (!host.lsm.empty()) out += fmt::format("  active LSMs: {}\n", host.lsm);

  out += "\n";
  for (const std::string& m : report.capabilities.missing) out += fmt::format("MISSING: {}\n", m);
  if (report.ok) {
    out += "OK: every feature the configured guarantees need is present; commands can run.\n";
  } else {
    out +=
        "NOT OK: a feature the configured guarantees need is missing; `cordon run` refuses "
        "(exit 125) until it is fixed (see the fixes above).\n";
  }
  return out;
}

}  // namespace cordon::cli
