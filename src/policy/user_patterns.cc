#include "policy/user_patterns.h"

#include <fmt/format.h>

#include <algorithm>

namespace cordon::policy {
namespace {

RE2::Options PatternOptions() {
  RE2::Options options;
  options.set_log_errors(false);
  // Room for the DFA of a thousand patterns; if the set still runs out, FirstMatch falls back
  // to matching the patterns one by one, which is slower but gives the same answer.
  options.set_max_mem(std::int64_t{64} << 20);
  return options;
}

}  // namespace

Result<PatternList> PatternList::Compile(const std::vector<std::string>& patterns,
                                         std::string_view list_name) {
  PatternList list;
  list.patterns_ = patterns;
  if (patterns.empty()) return list;
  RE2::Options options = PatternOptions();
  list.set_ = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    auto re = std::make_unique<RE2>(patterns[i], options);
    if (!re->ok()) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("command_policy.{}[{}]: invalid regular expression \"{}\": {}",
                              list_name, i, patterns[i], re->error()));
    }
    std::string set_error;
    if (list.set_->Add(patterns[i], &set_error) != static_cast<int>(i)) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("command_policy.{}[{}]: invalid regular expression \"{}\": {}",
                              list_name, i, patterns[i], set_error));
    }
    list.regexes_.push_back(std::move(re));
  }
  if (!list.set_->Compile()) list.set_.reset();  // out of memory: match one by one
  return list;
}

std::optional<std::size_t> PatternList::FirstMatch(std::string_view text) const {
  if (patterns_.empty()) return std::nullopt;
  re2::StringPiece piece(text.data(), text.size());
  if (set_) {
    std::vector<int> matches;
    RE2::Set::ErrorInfo info{};
    if (set_->Match(piece, &matches, &info)) {
      return static_cast<std::size_t>(*std::min_element(matches.begin(), matches.end()));
    }
    if (info.kind == RE2::Set::kNoError) return std::nullopt;
  }
  for (std::size_t i = 0; i < regexes_.size(); ++i) {
    if (RE2::PartialMatch(piece, *regexes_[i])) return i;
  }
  return std::nullopt;
}

}  // namespace cordon::policy
