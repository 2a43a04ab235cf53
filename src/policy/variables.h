// Shell variables as far as the text itself tells: values assigned earlier in the same text
// (x=sudo, export X=..., arrays, for-loop lists), so that a variable used as a command word
// can be replaced by what it holds. Values from elsewhere (the environment) stay unknown.
// Assignments accumulate: a variable may hold any value assigned to it earlier in the text,
// whatever subshell, pipeline stage, branch or function the assignment sits in (variables.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/command.h"

namespace cordon::policy {

struct Variable {
  std::vector<std::string> values;  // every value it may have (each assignment, a loop's list)
  bool from_output = false;         // assigned from $(...): the value is not known
};

class VariableTable {
 public:
  // "for NAME in WORDS": NAME may hold each of WORDS.
  void RecordLoop(const SimpleCommand& loop_header);
  // NAME=value, NAME+=value, NAME=(array), NAME=$(which x).
  void RecordAssignment(const Word& assignment);
  // NAME may hold `values` too (printf -v, read <<< WORD); `from_output`: not known.
  void Set(const std::string& name, std::vector<std::string> values, bool from_output);
  // set -- WORDS: $@, $* and $1..$9.
  void SetPositional(const std::vector<std::string>& words);
  const Variable* Find(std::string_view name) const;

  // The variables `text` expands that may hold more than one known value, each once.
  std::vector<std::string> SeveralValued(std::string_view text) const;
  // An operator's glob went past the bounds on the work it may cost: the text is too complex.
  bool TooComplex() const { return too_complex_; }
  // NAME holds `value` alone until Unpin, which gives back what it held before together with
  // whatever was assigned to it meanwhile (so a judged variant loses no assignment).
  Variable Pin(const std::string& name, const std::string& value);
  void Unpin(const std::string& name, Variable before, const std::string& value);

  // The word with every expansion replaced by its known value or, when unknown, by nothing:
  // su${x}do runs sudo when x is empty, which cordon cannot rule out. ${X:-WORD}, ${X=WORD} and
  // ${X:+WORD} give WORD where X's value does not rule it out. nullopt: unbalanced or too deep.
  // `all_known` (when given) becomes false when a value was not known (the environment's).
  std::optional<std::string> WithUnknownExpansionsEmpty(const std::string& text, int depth = 0,
                                                        bool* all_known = nullptr) const;

 private:
  // ${X<rest>} for X's known `value`: substrings, prefix and suffix removal, replacement, case,
  // an array element; nullopt where the text does not say (an operand it cannot work out).
  std::optional<std::string> Operated(const std::string& value, const std::string& rest, int depth,
                                      bool* all_known) const;

  std::map<std::string, Variable, std::less<>> vars_;
  // Glob matching done for the operators, and whether it went past its bounds (TooComplex).
  static constexpr std::size_t kMaxMatchedValue = 256;
  static constexpr std::size_t kMaxPattern = 64;
  static constexpr long kMaxStars = 4;
  static constexpr std::size_t kMaxMatches = 200'000;
  mutable std::size_t matches_ = 0;
  mutable bool too_complex_ = false;
};

// "$NAME", "${NAME}", "${NAME[@]}" or "${NAME[INDEX]}" as the whole word: the variable's name.
std::optional<std::string> WholeParameter(const Word& w);

// Whether a WholeParameter word is one element of an array ("${NAME[INDEX]}"): any of its
// words may be the one (an element assigned alone, a[3]=x, is not kept at its index).
bool OneElement(const Word& w);

// The text inside "$(...)" or `...` when that is the whole word.
std::optional<std::string_view> WholeSubstitution(std::string_view text);

// $(which NAME), $(command -v NAME), $(type -P NAME): NAME, which is what runs.
std::optional<std::string> LookedUpName(std::string_view inner, int depth);

// Word splitting of an unquoted expansion: on blanks, without any further parsing.
std::vector<Word> SplitValue(const std::string& value);

// $IFS in a word is word splitting in disguise: mkfs$IFS/dev/sda runs "mkfs /dev/sda".
std::vector<Word> SplitOnIfs(const std::vector<Word>& words);

}  // namespace cordon::policy
