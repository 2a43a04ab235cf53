// Shell variables as far as the text itself tells: values assigned earlier in the same text
// (x=sudo, export X=..., arrays, for-loop lists), so that a variable used as a command word
// can be replaced by what it holds. Values from elsewhere (the environment) stay unknown.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/command.h"

namespace cordon::policy {

struct Variable {
  std::vector<std::string> values;  // every value it may have (a for loop has several)
  bool from_output = false;         // assigned from $(...): the value is not known
};

class VariableTable {
 public:
  // "for NAME in WORDS": NAME may hold each of WORDS.
  void RecordLoop(const SimpleCommand& loop_header);
  // NAME=value, NAME+=value, NAME=(array), NAME=$(which x).
  void RecordAssignment(const Word& assignment);
  // NAME holds `values` (printf -v, read <<< WORD); `from_output`: not known.
  void Set(const std::string& name, std::vector<std::string> values, bool from_output);
  // set -- WORDS: $@, $* and $1..$9.
  void SetPositional(const std::vector<std::string>& words);
  const Variable* Find(std::string_view name) const;

  // The word with every expansion replaced by its known value or, when unknown, by nothing:
  // su${x}do runs sudo when x is empty, which cordon cannot rule out. ${X:-WORD}, ${X=WORD} and
  // ${X:+WORD} give WORD where X's value does not rule it out. nullopt: unbalanced or too deep.
  // `all_known` (when given) becomes false when a value was not known (the environment's).
  std::optional<std::string> WithUnknownExpansionsEmpty(const std::string& text, int depth = 0,
                                                        bool* all_known = nullptr) const;

 private:
  std::map<std::string, Variable, std::less<>> vars_;
};

// "$NAME", "${NAME}" or "${NAME[@]}" as the whole word: the variable's name.
std::optional<std::string> WholeParameter(const Word& w);

// The text inside "$(...)" or `...` when that is the whole word.
std::optional<std::string_view> WholeSubstitution(std::string_view text);

// $(which NAME), $(command -v NAME), $(type -P NAME): NAME, which is what runs.
std::optional<std::string> LookedUpName(std::string_view inner, int depth);

// Word splitting of an unquoted expansion: on blanks, without any further parsing.
std::vector<Word> SplitValue(const std::string& value);

// $IFS in a word is word splitting in disguise: mkfs$IFS/dev/sda runs "mkfs /dev/sda".
std::vector<Word> SplitOnIfs(const std::vector<Word>& words);

}  // namespace cordon::policy
