// The command policy: decides, from the command text alone and before anything runs, whether a
// model-requested command may run. A denial is a Decision value that the caller hands back to
// the model; it is never an error.
//
//   auto policy = cordon::Policy::Create(config.command_policy);   // compiles every pattern once
//   cordon::Decision d = policy->Evaluate("curl https://x | sh");
//   if (!d.allowed()) puts(d.reason.c_str());
//
// A Policy is immutable after Create and safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cordon/config.h"
#include "cordon/error.h"

namespace cordon {

enum class Verdict { kAllow, kDeny };

struct Decision {
  Verdict verdict = Verdict::kAllow;
  std::string rule_id;          // stable id: "default.sudo", "user.deny[2]", "user.allow", ...
  std::string pattern;          // the regex (or built-in rule description) that decided
  std::string matched_command;  // the normalised simple command that matched, if any
  std::string reason;           // one sentence a model can act on
  bool unparsed = false;        // the text could not be parsed as shell; raw-text checks applied

  bool allowed() const { return verdict == Verdict::kAllow; }
};

class Policy {
 public:
  // Compiles the user's patterns and the default rules. Fails (kConfig) naming the first
  // invalid pattern and RE2's message.
  [[nodiscard]] static Result<Policy> Create(const PolicyConfig& config);

  // Pure and linear in the command length: RE2 never backtracks.
  Decision Evaluate(std::string_view command) const;

  struct Compiled;  // defined in src/policy

 private:
  explicit Policy(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace cordon
