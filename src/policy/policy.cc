// Policy::Create and Policy::Evaluate: parse, normalise, then judge each simple command with
// the default rules and the user's deny patterns; the allow list last. Deny wins.
#include "cordon/policy.h"

#include <fmt/format.h>

#include "policy/default_rules.h"
#include "policy/normalise.h"
#include "policy/raw_rules.h"
#include "policy/shell_parser.h"
#include "policy/user_patterns.h"

namespace cordon {

// Larger than any command a model writes by hand (a here-doc that writes a big file included);
// text beyond it is refused rather than parsed, so evaluation time stays bounded.
inline constexpr std::size_t kMaxCommandBytes = std::size_t{1} << 20;

struct Policy::Compiled {
  policy::PatternList deny;
  policy::PatternList allow;
  bool default_deny = true;
  bool deny_unknown_command_words = false;
  policy::DefaultRules rules;
  policy::RawRules raw;
};

namespace {

Decision Deny(std::string rule_id, std::string pattern, std::string matched, std::string reason) {
  Decision d;
  d.verdict = Verdict::kDeny;
  d.rule_id = std::move(rule_id);
  d.pattern = std::move(pattern);
  d.matched_command = std::move(matched);
  d.reason = std::move(reason);
  return d;
}

Decision FromHit(policy::RuleHit hit, std::string matched) {
  return Deny(std::move(hit.rule_id), std::move(hit.pattern), std::move(matched),
              std::move(hit.reason));
}

Decision UserDeny(const policy::PatternList& deny, std::size_t i, std::string_view matched) {
  return Deny(fmt::format("user.deny[{}]", i), deny.pattern(i), std::string(matched),
              fmt::format("the command matches the pattern \"{}\" of the user's deny list; "
                          "do not retry it in another form, ask the user if it is needed.",
                          deny.pattern(i)));
}

Decision AllowListRefusal(std::string matched, std::string reason) {
  return Deny("user.allow", "", std::move(matched), std::move(reason));
}

// Text that could not be parsed: the user's deny patterns and the raw-text form of the
// default rules. With an allow list it is refused outright: nothing could be checked against it.
Decision EvaluateUnparsed(const Policy::Compiled& p, std::string_view text, std::string_view why) {
  Decision d;
  if (!p.allow.empty()) {
    d = AllowListRefusal(
        std::string(text),
        fmt::format("the command could not be parsed as shell text ({}), so it cannot be checked "
                    "against the user's allow list; fix the quoting or split the command.",
                    why));
  } else if (auto i = p.deny.FirstMatch(text)) {
    d = UserDeny(p.deny, *i, text);
  } else if (p.default_deny) {
    if (auto hit = p.raw.Check(text)) d = FromHit(std::move(*hit), std::string(text));
  }
  d.unparsed = true;
  return d;
}

Decision TooComplex() {
  return Deny("limit.too_complex",
              fmt::format("more than {} commands or {} bytes of nested shell text",
                          policy::kMaxCommands, policy::kMaxReparsedBytes),
              "",
              "the command text contains too many commands or too much nested shell text to "
              "check; split it into several shorter commands.");
}

}  // namespace

Result<Policy> Policy::Create(const PolicyConfig& config) {
  CORDON_TRY(policy::PatternList deny, policy::PatternList::Compile(config.deny, "deny"));
  CORDON_TRY(policy::PatternList allow, policy::PatternList::Compile(config.allow, "allow"));
  std::vector<std::string> extra;
  for (const std::string& name : config.nested_agents) {
    if (!name.empty()) extra.push_back(name);
  }
  policy::DefaultRules rules(extra);
  std::vector<std::string> all_agents = policy::DefaultAgentNames();
  all_agents.insert(all_agents.end(), extra.begin(), extra.end());
  CORDON_TRY(policy::RawRules raw, policy::RawRules::Create(all_agents));
  auto compiled = std::make_shared<const Compiled>(
      Compiled{std::move(deny), std::move(allow), config.default_deny,
               config.deny_unknown_command_words, std::move(rules), std::move(raw)});
  return Policy(std::move(compiled));
}

Decision Policy::Evaluate(std::string_view command) const {
  const Compiled& p = *compiled_;
  if (command.size() > kMaxCommandBytes) {
    return Deny("limit.too_long", fmt::format("length > {} bytes", kMaxCommandBytes), "",
                fmt::format("the command text is {} bytes, more than the {} bytes cordon checks; "
                            "write large content to files with several shorter commands.",
                            command.size(), kMaxCommandBytes));
  }
  Result<policy::Script> script = policy::ParseScript(command);
  if (!script && script.error().code == ErrorCode::kUnavailable) return TooComplex();
  if (!script) return EvaluateUnparsed(p, command, script.error().message);
  policy::Analysis analysis = policy::Analyse(*script, 0);
  if (analysis.too_complex) return TooComplex();
  policy::RuleContext context;
  if (p.default_deny) context = policy::MakeRuleContext(analysis);

  for (const policy::Command& c : analysis.commands) {
    if (p.default_deny) {
      if (auto hit = p.rules.Check(c, context)) return FromHit(std::move(*hit), c.text);
    }
    if (p.deny_unknown_command_words && c.origin == policy::Origin::kTop && !c.argv.empty() &&
        c.argv[0].Dynamic()) {
      return Deny("policy.unknown_command_word", "", c.text,
                  fmt::format("the command name \"{}\" is only known when it runs, and the "
                              "user's setting command_policy.deny_unknown_command_words refuses "
                              "such names; name the program itself.",
                              c.argv[0].text));
    }
    if (auto i = p.deny.FirstMatch(c.text)) return UserDeny(p.deny, *i, c.text);
    if (c.original != c.text) {
      if (auto i = p.deny.FirstMatch(c.original)) return UserDeny(p.deny, *i, c.original);
    }
  }
  if (auto i = p.deny.FirstMatch(command)) return UserDeny(p.deny, *i, command);
  for (const std::string& fragment : analysis.unparsed) {
    Decision d = EvaluateUnparsed(p, fragment, "nested shell text");
    if (!d.allowed()) return d;
  }
  if (!p.allow.empty()) {
    for (const policy::Command& c : analysis.commands) {
      if (c.argv.empty()) continue;  // only assignments or redirections: nothing is run
      if (!p.allow.FirstMatch(c.text)) {
        return AllowListRefusal(
            c.text, fmt::format("\"{}\" matches none of the user's allow patterns, and every "
                                "command in the text must; use an allowed command or ask the "
                                "user to extend the allow list.",
                                c.text));
      }
    }
  }
  Decision allowed;
  allowed.unparsed = !analysis.unparsed.empty();
  return allowed;
}

}  // namespace cordon
