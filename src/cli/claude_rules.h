// Claude Code's own permission rules for its Bash tool, applied by `cordon hook claude-code` to
// the model's command before the hook rewrites it (decision 0060): Claude Code matches its rules
// against the command it runs, which after the rewrite is `cordon run ... -c '...'`, so without
// this a user's `Bash(git push:*)` deny rule would stop matching.
//
// The rule forms, as Claude Code documents them: `Bash` (every command), `Bash(TEXT)` (exactly
// that command), `Bash(PREFIX:*)` (a command starting with PREFIX), and `*` wildcards inside
// TEXT. A rule matches the whole text or any simple command in it (as cordon's shell parser
// splits `a && b | c`, words joined by single spaces). Erring towards matching is the safe side:
// a deny that matches more refuses more.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::cli {

struct ClaudeRules {
  std::vector<std::string> deny;  // the rules' text as written, "Bash(...)" or "Bash"
  std::vector<std::string> ask;
};

// Adds the Bash rules of one settings file's JSON (permissions.deny and permissions.ask) to
// `rules`; anything else in it is ignored, as is a file that is not an object.
void AddClaudeRules(const nlohmann::json& settings, ClaudeRules& rules);

// The first rule of `rules` that matches `command`, or none.
std::optional<std::string> MatchingRule(const std::vector<std::string>& rules,
                                        std::string_view command);

}  // namespace cordon::cli
