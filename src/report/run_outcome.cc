#include "report/run_outcome.h"

#include <fmt/format.h>

#include "report/json_report.h"

namespace cordon::report {
namespace {

// Names the resource limit that ended the command or that it ran into (the exit code alone
// cannot say: 137 is any SIGKILL), after the command's own output.
void DescribeLimits(const RunResult& result, std::string& out) {
  if (result.limit != RunLimit::kNone) {
    out += fmt::format("cordon: the command was ended by the {} limit (limits.{})\n",
                       RunLimitName(result.limit), RunLimitConfigKey(result.limit));
  }
  for (RunLimit limit : result.limits_reached) {
    if (limit == result.limit || limit == RunLimit::kOutput) continue;
    out += fmt::format("cordon: the command reached the {} limit (limits.{})\n",
                       RunLimitName(limit), RunLimitConfigKey(limit));
  }
}

// The sandbox's refusals, after everything else cordon says.
void DescribeDenials(const RunResult& result, std::string& out) {
  std::size_t shown = 0;
  std::size_t more = 0;
  for (const Denial& d : result.denials) {
    if (d.layer == "policy" || d.layer == "limits") continue;  // said above
    if (shown == kMaxDenialLines) {
      ++more;
      continue;
    }
    out += fmt::format("cordon: {}\n", DescribeDenial(d));
    ++shown;
  }
  if (more > 0) out += fmt::format("cordon: ...and {} more refused (--json lists them)\n", more);
}

}  // namespace

std::string DescribeDenial(const Denial& d) {
  if (d.kind == "killed_at_exit") {
    return fmt::format("{} still running when the command ended were killed ({}: {}); {}", d.target,
                       d.layer, d.rule, d.fix);
  }
  if (d.kind == "discarded") {
    return fmt::format("{}, discarded at its end ({}: {}); {}", d.target, d.layer, d.rule, d.fix);
  }
  return fmt::format("{} {} refused ({}: {}); {}{}", d.kind, d.target, d.layer, d.rule,
                     d.fix.starts_with("by design") ? "" : "fix: ", d.fix);
}

RunOutcome RenderRunOutcome(const RunResult& result, bool json, std::chrono::milliseconds timeout,
                            bool explain) {
  RunOutcome outcome;
  outcome.exit_code = result.CliExitCode();
  outcome.duration = result.duration;
  if (json) {
    // The report can hold up to limits.output_bytes per stream, escaped (a NUL byte becomes
    // six): dumped once, never formatted again.
    outcome.stdout_text = Dump(RunResultToJson(result), 2);
    outcome.stdout_text.push_back('\n');
    return outcome;
  }
  switch (result.status) {
    case RunStatus::kDenied:
      outcome.stderr_text = fmt::format("cordon: denied by policy [{}]: {}\n",
                                        result.decision.rule_id, result.decision.reason);
      break;
    case RunStatus::kSetupFailed:
      outcome.stderr_text = fmt::format("cordon: could not run the command: {}\n", result.error);
      break;
    case RunStatus::kTimedOut:
      outcome.stderr_text =
          fmt::format("cordon: timed out after {} s; every process of the command was killed\n",
                      static_cast<double>(timeout.count()) / 1000.0);
      break;
    case RunStatus::kExited:
    case RunStatus::kSignaled:
      // A command that could not be executed (exit 127 or 126) says why, as a shell does.
      if (!result.error.empty()) outcome.stderr_text = fmt::format("cordon: {}\n", result.error);
      DescribeLimits(result, outcome.stderr_text);
      break;
  }
  if (explain) DescribeDenials(result, outcome.stderr_text);
  return outcome;
}

}  // namespace cordon::report
