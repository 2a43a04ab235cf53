#include "session/run_denials.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace cordon::session {
namespace {

Denial LimitDenial(RunLimit limit) {
  const std::string key = RunLimitConfigKey(limit);
  std::string fix = fmt::format("a higher limits.{} in your config", key);
  if (limit == RunLimit::kTimeout) fix += ", or cordon run --timeout SECONDS";
  if (limit == RunLimit::kOutput) {
    fix =
        "by design: the middle of a long output is dropped; write it to a file in the "
        "workspace, or raise limits.output_bytes in your config";
  }
  return {"limit", RunLimitName(limit), "limits", "limits." + key, std::move(fix)};
}

}  // namespace

void AddRunDenials(RunResult& result) {
  std::vector<Denial> own;
  if (result.status == RunStatus::kDenied) {
    const Decision& d = result.decision;
    own.push_back({"command", d.matched_command.empty() ? d.pattern : d.matched_command, "policy",
                   d.rule_id,
                   "the command policy refuses it before anything runs (`cordon check` shows "
                   "the rule): do it another way, or change command_policy in your own config"});
  }
  std::vector<RunLimit> limits = result.limits_reached;
  if (result.limit != RunLimit::kNone &&
      std::find(limits.begin(), limits.end(), result.limit) == limits.end()) {
    limits.insert(limits.begin(), result.limit);
  }
  std::vector<Denial> after;
  for (RunLimit limit : limits) after.push_back(LimitDenial(limit));
  own.insert(own.end(), result.denials.begin(), result.denials.end());
  own.insert(own.end(), after.begin(), after.end());
  if (own.size() > RunResult::kMaxDenials) own.resize(RunResult::kMaxDenials);
  result.denials = std::move(own);
}

}  // namespace cordon::session
