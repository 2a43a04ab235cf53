// `cordon check [--json] -- TEXT...`: the policy verdict for a command, and the rule that
// decided it. Nothing runs. Exit 0 allowed, 126 denied, 125 bad config.
#include <fmt/format.h>

#include <cstdio>

#include "cli/subcommands.h"
#include "cordon/policy.h"
#include "report/json_report.h"

namespace cordon::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> words;
  bool json = false;
};

int RunCheck(const GlobalOptions& global, const CheckOptions& options) {
  auto config = LoadConfig(global, SandboxFlags{});
  if (!config) return ReportSetupError(config.error());
  auto policy = Policy::Create(config->command_policy);
  if (!policy) return ReportSetupError(policy.error());

  // Several words are joined with spaces: `cordon check -- rm -rf /` checks "rm -rf /".
  std::string text;
  for (const std::string& word : options.words) {
    if (!text.empty()) text += ' ';
    text += word;
  }
  const Decision decision = policy->Evaluate(text);
  if (options.json) {
    nlohmann::json out = report::DecisionToJson(decision);
    out["command"] = text;
    fmt::print("{}\n", report::Dump(out, 2));
  } else if (decision.allowed()) {
    fmt::print("allow{}\n", decision.unparsed
                                ? " (text could not be parsed as shell; checked as raw text)"
                                : "");
  } else {
    fmt::print("deny [{}] {}\n", decision.rule_id, decision.reason);
    if (!decision.matched_command.empty()) fmt::print("  command: {}\n", decision.matched_command);
    if (!decision.pattern.empty()) fmt::print("  pattern: {}\n", decision.pattern);
  }
  return decision.allowed() ? 0 : kExitDenied;
}

}  // namespace

Subcommand AddCheckCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "check", "Print the command policy's verdict for command text (nothing runs)");
  auto options = std::make_shared<CheckOptions>();
  app->add_flag("--json", options->json, "Print the decision as JSON");
  app->add_option("command", options->words, "The command text (quote it, or put it after --)")
      ->required()
      ->type_name("TEXT");
  return {app, [&global, options] { return RunCheck(global, *options); }};
}

}  // namespace cordon::cli
