#include "policy/variables.h"

#include <cctype>

#include "policy/shell_parser.h"
#include "policy/wrappers.h"

namespace cordon::policy {

// "$NAME", "${NAME}" or "${NAME[@]}" as the whole word: the variable's name.
std::optional<std::string> WholeParameter(const Word& w) {
  if (!w.Has(kWordParam) || w.Has(kWordCommandSub | kWordProcessSub)) return std::nullopt;
  std::string_view t = w.text;
  if (t.starts_with("${") && t.ends_with("}")) {
    t = t.substr(2, t.size() - 3);
    if (std::size_t bracket = t.find('['); bracket != std::string_view::npos && t.ends_with("]")) {
      t = t.substr(0, bracket);
    }
  } else if (t.starts_with("$")) {
    t = t.substr(1);
  } else {
    return std::nullopt;
  }
  if (t.empty()) return std::nullopt;
  for (char c : t) {
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) {
      return std::nullopt;
    }
  }
  return std::string(t);
}

// The text inside "$(...)" or `...` when that is the whole word.
std::optional<std::string_view> WholeSubstitution(std::string_view t) {
  if (t.size() > 3 && t.starts_with("$(") && t.ends_with(")")) return t.substr(2, t.size() - 3);
  if (t.size() > 2 && t.starts_with("`") && t.ends_with("`")) return t.substr(1, t.size() - 2);
  return std::nullopt;
}

// $(which NAME), $(command -v NAME), $(type -P NAME): the path of NAME, so NAME is what runs.
std::optional<std::string> LookedUpName(std::string_view inner, int depth) {
  Result<Script> s = ParseScript(inner, depth + 1);
  if (!s || s->commands.size() != 1) return std::nullopt;
  const std::vector<Word>& w = s->commands[0].words;
  if (w.size() < 2 || w.back().Dynamic() || w.back().text.starts_with("-")) return std::nullopt;
  const std::string& tool = w[0].text;
  bool lookup = tool == "which" || tool == "command" || tool == "type" || tool == "whereis";
  if (!lookup) return std::nullopt;
  return std::string(Basename(w.back().text));
}

// Word splitting of an unquoted expansion: on blanks, without any further parsing.
std::vector<Word> SplitValue(const std::string& value) {
  std::vector<Word> out;
  std::size_t i = 0;
  while (i < value.size()) {
    std::size_t end = value.find_first_of(" \t\n", i);
    if (end == std::string::npos) end = value.size();
    if (end > i) {
      std::string part = value.substr(i, end - i);
      std::uint16_t flags = part.find('$') != std::string::npos ? kWordParam : 0;
      out.push_back(Word{std::move(part), flags});
    }
    i = end + 1;
  }
  return out;
}

// $IFS in a word is word splitting in disguise: mkfs$IFS/dev/sda runs "mkfs /dev/sda".
std::vector<Word> SplitOnIfs(const std::vector<Word>& words) {
  std::vector<Word> out;
  for (const Word& w : words) {
    if (!w.Has(kWordParam) || w.text.find("IFS") == std::string::npos) {
      out.push_back(w);
      continue;
    }
    const std::string& in = w.text;
    std::string t;
    for (std::size_t i = 0; i < in.size();) {
      if (in.compare(i, 6, "${IFS}") == 0) {
        t += ' ';
        i += 6;
      } else if (in.compare(i, 4, "$IFS") == 0 &&
                 (i + 4 == in.size() ||
                  !(std::isalnum(static_cast<unsigned char>(in[i + 4])) || in[i + 4] == '_'))) {
        t += ' ';
        i += 4;
      } else {
        t += in[i++];
      }
    }
    for (Word& part : SplitValue(t)) {
      part.flags |= w.flags & ~kWordParam;
      out.push_back(std::move(part));
    }
  }
  return out;
}

namespace {

// Values beyond these bounds are not tracked: the variable becomes unknown, which the rules
// treat like another command's output. Hostile text could otherwise make each command word
// expand into megabytes (x=<1 MiB>; a$x; a$x; ...) or appends multiply (x+=... in a loop).
constexpr std::size_t kMaxValues = 64;
constexpr std::size_t kMaxValueBytes = 4096;

void Bound(Variable& v) {
  bool too_big = v.values.size() > kMaxValues;
  for (const std::string& value : v.values) too_big = too_big || value.size() > kMaxValueBytes;
  if (too_big) {
    v.values.clear();
    v.from_output = true;
  }
}

}  // namespace

void VariableTable::RecordLoop(const SimpleCommand& sc) {
  if (sc.words.empty()) return;
  Variable v;
  for (std::size_t i = 1; i < sc.words.size(); ++i) {
    v.values.push_back(sc.words[i].text);
    if (sc.words[i].Has(kWordCommandSub | kWordProcessSub)) v.from_output = true;
  }
  Bound(v);
  vars_[sc.words[0].text] = std::move(v);
}

void VariableTable::RecordAssignment(const Word& w) {
  std::size_t eq = w.text.find('=');
  bool append = eq > 0 && w.text[eq - 1] == '+';
  std::string name = w.text.substr(0, append ? eq - 1 : eq);
  if (std::size_t bracket = name.find('['); bracket != std::string::npos) name.resize(bracket);
  std::string value = w.text.substr(eq + 1);
  if (value.size() >= 2 && value.front() == '(' && value.back() == ')') {
    value = value.substr(1, value.size() - 2);  // an array: its elements, word-split below
  }
  bool from_output = w.Has(kWordCommandSub | kWordProcessSub);
  if (auto inner = WholeSubstitution(value); inner && from_output) {
    if (auto looked_up = LookedUpName(*inner, 0)) {  // CC=$(which gcc)
      value = *looked_up;
      from_output = false;
    }
  }
  Variable& v = vars_[name];
  if (append && v.from_output) {
    // Still unknown: appending to an unknown value gives an unknown value.
  } else if (append && !v.values.empty()) {
    for (std::string& old : v.values) old += value;
  } else {
    v.values = {value};
    v.from_output = false;
  }
  if (from_output) v.from_output = true;
  Bound(v);
}

const Variable* VariableTable::Find(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

void VariableTable::Set(const std::string& name, std::vector<std::string> values,
                        bool from_output) {
  Variable& v = vars_[name];
  v.values = std::move(values);
  v.from_output = from_output;
  Bound(v);
}

void VariableTable::SetPositional(const std::vector<std::string>& words) {
  std::string all;
  for (const std::string& word : words) all += (all.empty() ? "" : " ") + word;
  Set("@", {all}, false);
  Set("*", {all}, false);
  for (std::size_t i = 0; i < 9; ++i) {
    Set(std::to_string(i + 1), {i < words.size() ? words[i] : std::string()}, false);
  }
}

namespace {

bool IsNameChar(char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)); }

// The end of the "${...}" that starts at `open` (the '$'), nested ones counted; npos: none.
std::size_t MatchingBrace(const std::string& t, std::size_t open) {
  int depth = 0;
  for (std::size_t k = open; k < t.size(); ++k) {
    if (t[k] == '$' && k + 1 < t.size() && t[k + 1] == '{') {
      ++depth;
      ++k;
    } else if (t[k] == '}' && --depth == 0) {
      return k;
    }
  }
  return std::string::npos;
}

// WORD of ${X:-WORD} without one pair of quotes around it.
std::string Unquoted(std::string word) {
  if (word.size() >= 2 && (word.front() == '"' || word.front() == '\'') &&
      word.back() == word.front()) {
    return word.substr(1, word.size() - 2);
  }
  return word;
}

}  // namespace

// The command word with every expansion replaced by its known value or, when unknown, by
// nothing: su${x}do runs sudo when x is empty, which cordon cannot rule out. The operators that
// may give their word instead (${X:-W}, ${X=W}, ${X:+W}) give it when X is not known to rule it
// out: the environment may leave X unset (or set it).
std::optional<std::string> VariableTable::WithUnknownExpansionsEmpty(const std::string& t,
                                                                     int depth,
                                                                     bool* all_known) const {
  if (depth > 8) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i] != '$' || i + 1 >= t.size()) {
      out += t[i];
      continue;
    }
    std::string name;
    std::string rest;  // after the name inside ${...}: an operator and its word
    char n = t[i + 1];
    if (n == '{') {
      const std::size_t close = MatchingBrace(t, i);
      if (close == std::string::npos) return std::nullopt;
      const std::string inner = t.substr(i + 2, close - i - 2);
      std::size_t k = 0;
      if (!inner.empty() && (inner[0] == '@' || inner[0] == '*' || inner[0] == '#')) {
        k = 1;
      } else {
        while (k < inner.size() && IsNameChar(inner[k])) ++k;
      }
      name = inner.substr(0, k);
      rest = inner.substr(k);
      i = close;
    } else if (n == '_' || std::isalpha(static_cast<unsigned char>(n))) {
      std::size_t end = i + 1;
      while (end < t.size() && IsNameChar(t[end])) ++end;
      name = t.substr(i + 1, end - i - 1);
      i = end - 1;
    } else if (n == '@' || n == '*' || std::isdigit(static_cast<unsigned char>(n))) {
      name = std::string(1, n);
      ++i;
    } else {
      out += t[i];
      continue;
    }
    auto it = vars_.find(name);
    const bool known =
        it != vars_.end() && !it->second.from_output && it->second.values.size() == 1;
    const std::string value = known ? it->second.values[0] : std::string();
    if (!known && all_known != nullptr) *all_known = false;
    const bool colon = rest.starts_with(':');
    const std::string_view op = std::string_view(rest).substr(colon ? 1 : 0);
    const bool gives_word = !op.empty() && (op[0] == '-' || op[0] == '=' || op[0] == '+');
    if (!gives_word) {
      out += value;  // plain, or an operator that only trims or tests the value
      continue;
    }
    const bool set = known && (!colon || !value.empty());
    const bool word = op[0] == '+' ? (set || !known) : !set;
    if (!word) {
      out += value;
      continue;
    }
    std::optional<std::string> expanded =
        WithUnknownExpansionsEmpty(Unquoted(std::string(op.substr(1))), depth + 1, all_known);
    if (!expanded) return std::nullopt;
    out += *expanded;
  }
  return out;
}

}  // namespace cordon::policy
