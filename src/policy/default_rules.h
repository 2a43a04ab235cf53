// cordon's built-in deny rules. Each has a stable id and a reason written for the model that
// asked for the command: what was refused and what to do instead. The rules look at the
// normalised command word and its arguments, never at the raw text, so `grep sudo notes.txt`
// and `git commit -m "rm -rf /"` are allowed. docs/policy.md has the table.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "policy/normalise.h"

namespace cordon::policy {

namespace rule {
inline constexpr std::string_view kPrivilege = "default.privilege";
inline constexpr std::string_view kRmRoot = "default.rm_root";
inline constexpr std::string_view kShellFeed = "default.shell_feed";
inline constexpr std::string_view kFilesystem = "default.filesystem";
inline constexpr std::string_view kDeviceWrite = "default.device_write";
inline constexpr std::string_view kNestedAgent = "default.nested_agent";
inline constexpr std::string_view kCordonUnsafe = "default.cordon_unsafe";
}  // namespace rule

struct RuleHit {
  std::string rule_id;
  std::string pattern;  // what the rule matched, described ("command word sudo")
  std::string reason;
};

// The reason sentence for a default rule id ("" for an unknown id).
std::string_view RuleReason(std::string_view rule_id);
RuleHit MakeHit(std::string_view rule_id, std::string pattern);

// Whether a command word names `name`: its basename equals it, or, for an unquoted glob such
// as /usr/bin/su?o, the glob matches it.
bool NameIs(const Word& word, std::string_view name);

// The built-in agent CLIs refused as nested agents.
const std::vector<std::string>& DefaultAgentNames();

// What the rules know about the whole text, beyond the one command they judge.
struct RuleContext {
  // Basenames of files that a download command in the same text writes (curl -o F, wget -O F,
  // curl URL > F): running one of them with a shell is the same as curl | sh.
  // A set: a hostile text with thousands of downloads must not make each check linear.
  std::set<std::string, std::less<>> downloaded;
  // Descriptors an earlier `exec N< <(...)` (or of a downloaded file) opened: a shell reading
  // its program from one (sh <&N) runs text cordon never saw.
  std::set<int> generated_fds;
};

RuleContext MakeRuleContext(const Analysis& analysis);

class DefaultRules {
 public:
  explicit DefaultRules(const std::vector<std::string>& extra_agents);

  // The first rule the command breaks, if any.
  std::optional<RuleHit> Check(const Command& command, const RuleContext& context) const;

 private:
  std::optional<RuleHit> CheckNestedAgent(const Command& c) const;
  std::vector<std::string> agents_;
};

// Rules in their own files (path_rules.cc, shell_feed_rule.cc).
std::optional<RuleHit> CheckRmRoot(const Command& c);
std::optional<RuleHit> CheckDeviceWrite(const Command& c);
std::optional<RuleHit> CheckShellFeed(const Command& c, const RuleContext& context);

}  // namespace cordon::policy
