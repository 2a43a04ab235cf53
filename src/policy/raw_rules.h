// The default rules as regular expressions over raw text, used only for text that cannot be
// parsed as shell (and so cannot be split into commands). They are coarser than the parsed
// rules on purpose: text that does not parse is already suspect.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "policy/default_rules.h"

namespace cordon::policy {

class RawRules {
 public:
  [[nodiscard]] static Result<RawRules> Create(const std::vector<std::string>& agent_names);

  std::optional<RuleHit> Check(std::string_view text) const;

 private:
  struct Rule {
    std::string_view rule_id;
    std::string pattern;
    std::unique_ptr<RE2> re;
  };
  std::vector<Rule> rules_;
};

}  // namespace cordon::policy
