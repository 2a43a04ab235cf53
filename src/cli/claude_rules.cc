#include "cli/claude_rules.h"

#include <fnmatch.h>

#include "policy/normalise.h"
#include "policy/shell_parser.h"

namespace cordon::cli {
namespace {

void AddBashRules(const nlohmann::json& list, std::vector<std::string>& out) {
  if (!list.is_array()) return;
  for (const nlohmann::json& rule : list) {
    if (!rule.is_string()) continue;
    const std::string& text = rule.get_ref<const std::string&>();
    if (text == "Bash" || (text.starts_with("Bash(") && text.ends_with(")"))) out.push_back(text);
  }
}

// The texts a rule is matched against: the whole command, and each command cordon's policy
// finds in it, both as written and normalised (assignments and wrappers such as env, command,
// nice or timeout stripped, a path reduced to its name, `sh -c TEXT` and `eval` parsed again),
// so that `FOO=1 /usr/bin/git push` and `sh -c 'git push'` meet a `Bash(git push:*)` rule too.
std::vector<std::string> Candidates(std::string_view command) {
  std::vector<std::string> out = {std::string(command)};
  Result<policy::Script> script = policy::ParseScript(command);
  if (!script) return out;
  const policy::Analysis analysis = policy::Analyse(*script, 0);
  for (const policy::Command& found : analysis.commands) {
    if (!found.text.empty()) out.push_back(found.text);
    if (!found.original.empty() && found.original != found.text) out.push_back(found.original);
  }
  out.insert(out.end(), analysis.unparsed.begin(), analysis.unparsed.end());
  return out;
}

bool Matches(std::string_view pattern, const std::string& candidate) {
  if (pattern.ends_with(":*")) {
    const std::string_view prefix = pattern.substr(0, pattern.size() - 2);
    return candidate.starts_with(prefix) &&
           (candidate.size() == prefix.size() || candidate[prefix.size()] == ' ' || prefix.empty());
  }
  if (pattern.find('*') != std::string_view::npos) {
    return ::fnmatch(std::string(pattern).c_str(), candidate.c_str(), 0) == 0;
  }
  return candidate == pattern;
}

}  // namespace

void AddClaudeRules(const nlohmann::json& settings, ClaudeRules& rules) {
  if (!settings.is_object()) return;
  const auto permissions = settings.find("permissions");
  if (permissions == settings.end() || !permissions->is_object()) return;
  if (const auto deny = permissions->find("deny"); deny != permissions->end()) {
    AddBashRules(*deny, rules.deny);
  }
  if (const auto ask = permissions->find("ask"); ask != permissions->end()) {
    AddBashRules(*ask, rules.ask);
  }
}

std::optional<std::string> MatchingRule(const std::vector<std::string>& rules,
                                        std::string_view command) {
  if (rules.empty()) return std::nullopt;
  const std::vector<std::string> candidates = Candidates(command);
  for (const std::string& rule : rules) {
    if (rule == "Bash") return rule;
    const std::string_view pattern = std::string_view(rule).substr(5, rule.size() - 6);
    for (const std::string& candidate : candidates) {
      if (Matches(pattern, candidate)) return rule;
    }
  }
  return std::nullopt;
}

}  // namespace cordon::cli
