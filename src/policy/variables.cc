#include "policy/variables.h"

#include <fnmatch.h>

#include <algorithm>
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

bool OneElement(const Word& w) {
  const std::string_view t = w.text;
  return t.starts_with("${") && t.ends_with("]}") && !t.ends_with("[@]}") && !t.ends_with("[*]}");
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

// A later assignment adds to what the variable may hold; it never takes an earlier value away.
// The text alone does not say which assignment is in effect where the variable is used: one
// may sit in a subshell, a pipeline stage or $(...) (gone when it ends), a branch that is not
// taken (`false && x=ls`), or a function that is never called. Every value is judged, so the
// dangerous one is never hidden behind a harmless one; the price is judging a value that a
// later top-level assignment replaced, which errs toward refusing.
void Add(Variable& v, const std::vector<std::string>& values, bool from_output) {
  for (const std::string& value : values) {
    if (std::find(v.values.begin(), v.values.end(), value) == v.values.end()) {
      v.values.push_back(value);
    }
  }
  if (from_output) v.from_output = true;
  Bound(v);
}

}  // namespace

void VariableTable::RecordLoop(const SimpleCommand& sc) {
  if (sc.words.empty()) return;
  std::vector<std::string> values;
  bool from_output = false;
  for (std::size_t i = 1; i < sc.words.size(); ++i) {
    values.push_back(sc.words[i].text);
    if (sc.words[i].Has(kWordCommandSub | kWordProcessSub)) from_output = true;
  }
  Add(vars_[sc.words[0].text], values, from_output);
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
    // Each value with the addition, and (Add) each without it: the append may not run.
    std::vector<std::string> appended = v.values;
    for (std::string& old : appended) old += value;
    Add(v, appended, false);
  } else {
    Add(v, {value}, false);
  }
  if (from_output) v.from_output = true;
  Bound(v);
}

const Variable* VariableTable::Find(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

std::vector<std::string> VariableTable::SeveralValued(std::string_view t) const {
  std::vector<std::string> names;
  for (std::size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i] != '$') continue;
    std::size_t k = i + 1;
    if (t[k] == '{') ++k;
    std::string name;
    if (k < t.size() &&
        (t[k] == '@' || t[k] == '*' || std::isdigit(static_cast<unsigned char>(t[k])))) {
      name = std::string(1, t[k]);
    } else {
      while (k < t.size() && (t[k] == '_' || std::isalnum(static_cast<unsigned char>(t[k])))) {
        name += t[k++];
      }
    }
    const Variable* v = Find(name);
    if (v == nullptr || v->from_output || v->values.size() < 2) continue;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

Variable VariableTable::Pin(const std::string& name, const std::string& value) {
  Variable& v = vars_[name];
  Variable before = v;
  v.values = {value};
  v.from_output = false;
  return before;
}

void VariableTable::Unpin(const std::string& name, Variable before, const std::string& value) {
  Variable& v = vars_[name];
  std::erase(v.values, value);
  Add(before, v.values, v.from_output);
  v = std::move(before);
}

void VariableTable::Set(const std::string& name, std::vector<std::string> values,
                        bool from_output) {
  Add(vars_[name], values, from_output);
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

// An arithmetic expression of integer literals (+ - * / % and parentheses, optionally inside
// $((...))), as an offset or index is written; nullopt when it names anything else.
class Arithmetic {
 public:
  explicit Arithmetic(std::string_view text) : t_(text) {
    Skip();
    if (t_.starts_with("$((") && t_.ends_with("))")) t_ = t_.substr(3, t_.size() - 5);
  }
  std::optional<long long> Value() {
    std::optional<long long> v = Sum(0);
    Skip();
    return pos_ == t_.size() ? v : std::nullopt;
  }

 private:
  void Skip() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\t')) ++pos_;
  }
  bool Take(char c) {
    Skip();
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<long long> Sum(int depth) {
    std::optional<long long> v = Product(depth);
    while (v) {
      if (Take('+')) {
        auto r = Product(depth);
        v = r ? std::optional(*v + *r) : std::nullopt;
      } else if (Take('-')) {
        auto r = Product(depth);
        v = r ? std::optional(*v - *r) : std::nullopt;
      } else {
        break;
      }
      v = Bounded(v);
    }
    return v;
  }
  std::optional<long long> Product(int depth) {
    std::optional<long long> v = Unary(depth);
    while (v) {
      const bool mul = Take('*');
      const bool div = !mul && Take('/');
      const bool mod = !mul && !div && Take('%');
      if (!mul && !div && !mod) break;
      auto r = Unary(depth);
      if (!r || ((div || mod) && *r == 0)) return std::nullopt;
      v = Bounded(mul ? *v * *r : div ? *v / *r : *v % *r);
    }
    return v;
  }
  // Offsets and indexes beyond a string's reach are not worked out (nor overflowed).
  static std::optional<long long> Bounded(std::optional<long long> v) {
    constexpr long long kLimit = 1'000'000'000;
    return v && *v<kLimit&& * v> - kLimit ? v : std::nullopt;
  }
  std::optional<long long> Unary(int depth) {
    if (depth > 16) return std::nullopt;
    if (Take('-')) {
      auto v = Unary(depth + 1);
      return v ? std::optional(-*v) : std::nullopt;
    }
    if (Take('+')) return Unary(depth + 1);
    if (Take('(')) {
      auto v = Sum(depth + 1);
      return v && Take(')') ? v : std::nullopt;
    }
    Skip();
    long long v = 0;
    const std::size_t start = pos_;
    while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_])) &&
           pos_ - start < 9) {
      v = v * 10 + (t_[pos_++] - '0');
    }
    return pos_ > start ? std::optional(v) : std::nullopt;
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

// ${X:OFFSET} and ${X:OFFSET:LENGTH}, as bash counts them (a negative offset from the end, a
// negative length up to that far from the end).
std::optional<std::string> Substring(const std::string& value, std::string_view spec) {
  const std::size_t colon = spec.find(':');
  auto offset = Arithmetic(spec.substr(0, colon)).Value();
  if (!offset) return std::nullopt;
  const long long size = static_cast<long long>(value.size());
  long long from = *offset < 0 ? size + *offset : *offset;
  if (from < 0 || from > size) return std::string();
  long long to = size;
  if (colon != std::string_view::npos) {
    auto length = Arithmetic(spec.substr(colon + 1)).Value();
    if (!length) return std::nullopt;
    to = *length < 0 ? size + *length : from + *length;
  }
  if (to <= from) return std::string();
  return value.substr(static_cast<std::size_t>(from),
                      static_cast<std::size_t>(std::min(to, size) - from));
}

// ${X#P}, ${X##P}, ${X%P}, ${X%%P}: the shortest or longest prefix or suffix matching the
// glob P removed.
std::string RemoveMatch(const std::string& value, const std::string& pattern, bool prefix,
                        bool longest, std::size_t& matches) {
  const std::size_t n = value.size();
  for (std::size_t k = 0; k <= n; ++k) {
    ++matches;
    const std::size_t len = longest ? n - k : k;
    const std::string part = prefix ? value.substr(0, len) : value.substr(n - len);
    if (::fnmatch(pattern.c_str(), part.c_str(), 0) == 0) {
      return prefix ? value.substr(len) : value.substr(0, n - len);
    }
  }
  return value;
}

// ${X/P/R}, ${X//P/R}, ${X/#P/R}, ${X/%P/R}: the longest match of P replaced (the first, every
// one, at the start, at the end).
std::string Replace(const std::string& value, const std::string& pattern,
                    const std::string& replacement, char mode, std::size_t& matches) {
  if (pattern.empty()) return value;
  std::string out;
  const std::size_t n = value.size();
  std::size_t i = 0;
  bool replaced = false;
  while (i <= n) {
    std::size_t match = std::string::npos;
    const bool here = (mode != '#' || i == 0) && !(replaced && mode != '/');
    for (std::size_t end = n; here && end > i; --end) {
      if (mode == '%' && end != n) break;
      ++matches;
      if (::fnmatch(pattern.c_str(), value.substr(i, end - i).c_str(), 0) == 0) {
        match = end;
        break;
      }
    }
    if (match != std::string::npos) {
      out += replacement;
      i = match;
      replaced = true;
      continue;
    }
    if (i < n) out += value[i];
    ++i;
  }
  return out;
}

std::string Cased(std::string value, bool upper, bool all) {
  for (std::size_t i = 0; i < value.size() && (all || i == 0); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    value[i] = static_cast<char>(upper ? std::toupper(c) : std::tolower(c));
  }
  return value;
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
    // ${#X}: the length of X; ${!X}: the variable X names.
    bool length = false;
    if (name == "#" && !rest.empty() && IsNameChar(rest[0])) {
      length = true;
      std::swap(name, rest);
    } else if (name.empty() && rest.size() > 1 && rest[0] == '!' && IsNameChar(rest[1])) {
      const Variable* named = Find(rest.substr(1));
      const bool one = named != nullptr && !named->from_output && named->values.size() == 1;
      name = one ? named->values[0] : std::string();
      rest.clear();
    }
    auto it = vars_.find(name);
    const bool known =
        it != vars_.end() && !it->second.from_output && it->second.values.size() == 1;
    std::string value = known ? it->second.values[0] : std::string();
    if (!known && all_known != nullptr) *all_known = false;
    if (length) {
      out += known ? std::to_string(value.size()) : std::string();
      continue;
    }
    const bool colon = rest.starts_with(':');
    const std::string_view op = std::string_view(rest).substr(colon ? 1 : 0);
    const bool gives_word = !op.empty() && (op[0] == '-' || op[0] == '=' || op[0] == '+');
    if (!gives_word) {
      // Plain, or an operator that makes another value of it: worked out where the text says
      // how, else not known.
      std::optional<std::string> made =
          rest.empty() || !known ? std::optional(value) : Operated(value, rest, depth, all_known);
      if (!made && all_known != nullptr) *all_known = false;
      out += made.value_or(std::string());
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

std::optional<std::string> VariableTable::Operated(const std::string& value,
                                                   const std::string& rest, int depth,
                                                   bool* all_known) const {
  auto expanded = [&](std::string_view text) {
    return WithUnknownExpansionsEmpty(Unquoted(std::string(text)), depth + 1, all_known);
  };
  // Matching a glob at every position of a value costs its square: bounded per text. Past the
  // bounds the text is too complex (refused), never judged as if the value were unknown.
  auto matchable = [&](const std::string& pattern) {
    const bool small = value.size() <= kMaxMatchedValue && pattern.size() <= kMaxPattern &&
                       std::count(pattern.begin(), pattern.end(), '*') <= kMaxStars &&
                       matches_ <= kMaxMatches;
    if (!small) too_complex_ = true;
    return small;
  };
  const char op = rest[0];
  if (op == ':') return Substring(value, rest.substr(1));
  if (op == '[') {
    // One element of an array (its values split into words).
    if (!rest.ends_with("]")) return std::nullopt;
    auto index = Arithmetic(std::string_view(rest).substr(1, rest.size() - 2)).Value();
    const std::vector<Word> elements = SplitValue(value);
    if (!index || *index < 0) return std::nullopt;
    return *index < static_cast<long long>(elements.size())
               ? elements[static_cast<std::size_t>(*index)].text
               : std::string();
  }
  if (op == '#' || op == '%') {
    const bool longest = rest.size() > 1 && rest[1] == op;
    auto pattern = expanded(std::string_view(rest).substr(longest ? 2 : 1));
    if (!pattern || !matchable(*pattern)) return std::nullopt;
    return RemoveMatch(value, *pattern, op == '#', longest, matches_);
  }
  if (op == '/') {
    std::string_view spec = std::string_view(rest).substr(1);
    char mode = 'f';  // the first match
    if (!spec.empty() && (spec[0] == '/' || spec[0] == '#' || spec[0] == '%')) {
      mode = spec[0];
      spec = spec.substr(1);
    }
    const std::size_t slash = spec.find('/');
    auto pattern = expanded(spec.substr(0, slash));
    auto replacement = slash == std::string_view::npos ? std::optional(std::string())
                                                       : expanded(spec.substr(slash + 1));
    if (!pattern || !replacement || !matchable(*pattern)) return std::nullopt;
    return Replace(value, *pattern, *replacement, mode, matches_);
  }
  if (rest == "^" || rest == "^^" || rest == "," || rest == ",,") {
    return Cased(value, op == '^', rest.size() == 2);
  }
  if (rest == "@U" || rest == "@L" || rest == "@u") {
    return Cased(value, rest != "@L", rest != "@u");
  }
  return std::nullopt;
}

}  // namespace cordon::policy
