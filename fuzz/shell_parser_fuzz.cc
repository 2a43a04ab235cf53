// libFuzzer target: arbitrary bytes through the shell parser, the normaliser and
// Policy::Evaluate with the default rules (and a small allow list, which takes other paths).
// Properties checked beyond "no crash, no sanitizer report": a denial always names a rule and
// gives a reason, and evaluation is deterministic.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cordon/policy.h"
#include "policy/normalise.h"
#include "policy/shell_parser.h"
#include "policy/wrappers.h"

namespace {

const cordon::Policy& DefaultPolicy() {
  static const cordon::Policy policy = *cordon::Policy::Create(cordon::PolicyConfig{});
  return policy;
}

const cordon::Policy& AllowListPolicy() {
  static const cordon::Policy policy = [] {
    cordon::PolicyConfig config;
    config.allow = {"^(ls|git|make)( |$)"};
    config.deny = {"--force", "^rm .*-r"};
    return *cordon::Policy::Create(config);
  }();
  return policy;
}

void Check(const cordon::Policy& policy, std::string_view text) {
  cordon::Decision d = policy.Evaluate(text);
  if (!d.allowed() && (d.rule_id.empty() || d.reason.empty())) std::abort();
  cordon::Decision again = policy.Evaluate(text);
  if (again.verdict != d.verdict || again.rule_id != d.rule_id) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto script = cordon::policy::ParseScript(text);
  if (script) {
    cordon::policy::Analysis analysis = cordon::policy::Analyse(*script, 0);
    for (const auto& c : analysis.commands) {
      // No runaway expansion: brace expansion is the only thing that may grow a command, and
      // it is capped.
      if (c.text.size() > 16 * text.size() + cordon::policy::kMaxBraceBytes) std::abort();
    }
  }
  Check(DefaultPolicy(), text);
  Check(AllowListPolicy(), text);
  return 0;
}
