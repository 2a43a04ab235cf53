// Field-by-field comparison of Configs (cordon::Config has no operator==), printing the JSON
// form of both on mismatch.
#pragma once

#include <gtest/gtest.h>

#include <tuple>

#include "config/to_json.h"
#include "cordon/config.h"

namespace cordon::config::testing {

inline auto Fields(const Config& c) {
  return std::tie(c.sandbox.mode, c.sandbox.network, c.sandbox.allowed_domains,
                  c.sandbox.denied_domains, c.sandbox.domain_lists, c.sandbox.writable_roots,
                  c.sandbox.protect_git_metadata, c.sandbox.protect_host_run_files,
                  c.sandbox.host_run_files, c.sandbox.allow_outside_sandbox, c.sandbox.hidden_paths,
                  c.sandbox.backend, c.command_policy.deny, c.command_policy.allow,
                  c.command_policy.default_deny, c.command_policy.nested_agents, c.limits.timeout,
                  c.limits.output_bytes, c.environment.pass, c.environment.set);
}

inline ::testing::AssertionResult ConfigsEqual(const Config& a, const Config& b) {
  if (Fields(a) == Fields(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "configs differ:\n" << ToJson(a) << "vs\n" << ToJson(b);
}

}  // namespace cordon::config::testing
