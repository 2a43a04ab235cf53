// Test helpers: a Policy built from a config, and the rule id a command gets ("" = allowed).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "cordon/policy.h"

namespace cordon::policy::testing {

inline Policy MakePolicy(PolicyConfig config = {}) {
  Result<Policy> p = Policy::Create(config);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
  return std::move(*p);
}

inline std::string RuleFor(const Policy& policy, std::string_view command) {
  Decision d = policy.Evaluate(command);
  return d.allowed() ? "" : d.rule_id;
}

}  // namespace cordon::policy::testing
