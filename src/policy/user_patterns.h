// The user's deny and allow regular expressions, compiled once with RE2 (linear time, so
// neither a hostile pattern nor a hostile command can make the check hang). Matching is
// unanchored (RE2::PartialMatch semantics); write ^ and $ to anchor.
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"

namespace cordon::policy {

class PatternList {
 public:
  // `list_name` ("deny" or "allow") names the list in error messages. An invalid pattern is a
  // kConfig error naming the list, the index, the pattern and RE2's message.
  [[nodiscard]] static Result<PatternList> Compile(const std::vector<std::string>& patterns,
                                                   std::string_view list_name);

  // The lowest index of a pattern that matches somewhere in `text`.
  std::optional<std::size_t> FirstMatch(std::string_view text) const;

  bool empty() const { return patterns_.empty(); }
  const std::string& pattern(std::size_t i) const { return patterns_[i]; }

 private:
  std::vector<std::string> patterns_;
  std::vector<std::unique_ptr<RE2>> regexes_;
  // All patterns in one automaton: one pass over the text however many patterns there are.
  std::unique_ptr<RE2::Set> set_;
};

}  // namespace cordon::policy
