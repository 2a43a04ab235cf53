#include "policy/normalise.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "policy/interpreters.h"
#include "policy/shell_parser.h"
#include "policy/wrappers.h"

namespace cordon::policy {
namespace {

std::string Join(const std::vector<Word>& words, std::size_t from = 0) {
  std::string out;
  for (std::size_t i = from; i < words.size(); ++i) {
    if (i > from) out += ' ';
    out += words[i].text;
  }
  return out;
}

bool IsStdinPath(const std::string& path) {
  return path == "/dev/stdin" || path == "/dev/fd/0" || path == "/proc/self/fd/0";
}

// The last redirection of descriptor 0 decides; without one, a pipeline stage reads the pipe.
void SetStdin(Command& c, bool piped) {
  c.stdin_source = piped ? StdinSource::kPipe : StdinSource::kInherited;
  for (const Redirect& r : c.redirects) {
    if (r.EffectiveFd() != 0) continue;
    switch (r.op) {
      case RedirectOp::kIn:
      case RedirectOp::kReadWrite:
        if (r.target.Has(kWordProcessSub | kWordCommandSub)) {
          c.stdin_source = StdinSource::kSubstitution;
        } else if (!IsStdinPath(r.target.text)) {
          c.stdin_source = StdinSource::kFile;
        }
        break;
      case RedirectOp::kDupIn:
        c.stdin_source = StdinSource::kFile;
        break;
      case RedirectOp::kHereDoc:
        c.stdin_source = StdinSource::kHereDoc;
        c.stdin_text = r.body;
        break;
      case RedirectOp::kHereString:
        c.stdin_source = r.target.Has(kWordCommandSub | kWordProcessSub)
                             ? StdinSource::kSubstitution
                             : StdinSource::kHereDoc;
        c.stdin_text = r.target.text;
        break;
      case RedirectOp::kOut:
      case RedirectOp::kAppend:
      case RedirectOp::kClobber:
      case RedirectOp::kDupOut:
      case RedirectOp::kOutErr:
      case RedirectOp::kAppendOutErr:
        break;
    }
  }
}

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

struct Variable {
  std::vector<std::string> values;  // every value it may have (a for loop has several)
  bool from_output = false;         // assigned from $(...): the value is not known
};

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

// Each variable used as a command word multiplies the commands judged; this bounds the total
// (x='$x'-style self references, for loops over loops).
constexpr int kMaxVariants = 256;

class Analyser {
 public:
  explicit Analyser(Analysis& out) : out_(out) {}

  void AddScript(const Script& script, int depth) {
    for (const SimpleCommand& sc : script.commands) {
      if (sc.loop_header) {
        RecordLoop(sc);
      } else {
        Add(sc, depth);
      }
    }
  }

 private:
  void RecordLoop(const SimpleCommand& sc) {
    if (sc.words.empty()) return;
    Variable v;
    for (std::size_t i = 1; i < sc.words.size(); ++i) {
      v.values.push_back(sc.words[i].text);
      if (sc.words[i].Has(kWordCommandSub | kWordProcessSub)) v.from_output = true;
    }
    vars_[sc.words[0].text] = std::move(v);
  }

  void RecordAssignment(const Word& w) {
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
    if (append && !v.values.empty()) {
      for (std::string& old : v.values) old += value;
    } else {
      v.values = {value};
      v.from_output = false;
    }
    if (from_output) v.from_output = true;
  }

  void RecordAssignments(const std::vector<Word>& words, const Unwrapped& u) {
    if (u.argv.empty()) {
      for (const Word& w : words) {
        if (IsAssignment(w)) RecordAssignment(w);
      }
      return;
    }
    std::string_view name = Basename(u.argv[0].text);
    if (name == "export" || name == "declare" || name == "local" || name == "readonly" ||
        name == "typeset") {
      for (std::size_t i = 1; i < u.argv.size(); ++i) {
        if (IsAssignment(u.argv[i])) RecordAssignment(u.argv[i]);
      }
    }
  }

  // $IFS in a word is word splitting in disguise: mkfs$IFS/dev/sda runs "mkfs /dev/sda".
  static std::vector<Word> SplitOnIfs(const std::vector<Word>& words) {
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
                   (i + 4 == in.size() || !(std::isalnum(static_cast<unsigned char>(in[i + 4])) ||
                                            in[i + 4] == '_'))) {
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

  // The command word with every expansion replaced by its known value or, when unknown, by
  // nothing: su${x}do runs sudo when x is empty, which cordon cannot rule out.
  std::optional<std::string> WithUnknownExpansionsEmpty(const std::string& t) const {
    std::string out;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t[i] != '$' || i + 1 >= t.size()) {
        out += t[i];
        continue;
      }
      std::string name;
      char n = t[i + 1];
      if (n == '{') {
        std::size_t close = t.find('}', i + 2);
        if (close == std::string::npos) return std::nullopt;
        name = t.substr(i + 2, close - i - 2);
        i = close;
      } else if (n == '_' || std::isalpha(static_cast<unsigned char>(n))) {
        std::size_t end = i + 1;
        while (end < t.size() && (t[end] == '_' || std::isalnum(static_cast<unsigned char>(t[end])))) {
          ++end;
        }
        name = t.substr(i + 1, end - i - 1);
        i = end - 1;
      } else if (n == '@' || n == '*' || std::isdigit(static_cast<unsigned char>(n))) {
        ++i;
        continue;
      } else {
        out += t[i];
        continue;
      }
      auto it = vars_.find(name);
      if (it != vars_.end() && !it->second.from_output && it->second.values.size() == 1) {
        out += it->second.values[0];
      }
    }
    return out;
  }

  void Add(const SimpleCommand& original, int depth) {
    SimpleCommand split_ifs;
    const bool has_ifs = std::any_of(original.words.begin(), original.words.end(), [](const Word& w) {
      return w.Has(kWordParam) && w.text.find("IFS") != std::string::npos;
    });
    if (has_ifs) {
      split_ifs = original;
      split_ifs.words = SplitOnIfs(original.words);
    }
    const SimpleCommand& sc = has_ifs ? split_ifs : original;
    Unwrapped u = Unwrap(sc.words);
    RecordAssignments(sc.words, u);
    if (!u.argv.empty()) {
      if (auto var = WholeParameter(u.argv[0])) {
        auto it = vars_.find(*var);
        if (it != vars_.end() && !it->second.from_output && depth < kMaxNesting &&
            variants_ < kMaxVariants) {
          // Judge the command once for each value the variable may have.
          std::vector<std::string> values = it->second.values;
          for (const std::string& value : values) {
            if (++variants_ > kMaxVariants) break;
            SimpleCommand variant = sc;
            variant.words = SplitValue(value);
            for (std::size_t i = 1; i < u.argv.size(); ++i) variant.words.push_back(u.argv[i]);
            if (variant.words.empty()) continue;
            AddResolved(variant, Unwrap(variant.words), depth + 1, false);
          }
          return;
        }
        AddResolved(sc, std::move(u), depth, it != vars_.end() && it->second.from_output);
        return;
      }
      const Word& w = u.argv[0];
      if (w.Has(kWordParam) && !w.Has(kWordCommandSub) && variants_ < kMaxVariants) {
        std::optional<std::string> shown = WithUnknownExpansionsEmpty(w.text);
        if (shown && !shown->empty() && *shown != w.text) {
          ++variants_;
          SimpleCommand variant = sc;
          variant.words = SplitValue(*shown);
          for (std::size_t i = 1; i < u.argv.size(); ++i) variant.words.push_back(u.argv[i]);
          AddResolved(variant, Unwrap(variant.words), depth, false);
        }
      }
    }
    AddResolved(sc, std::move(u), depth, false);
  }

  void AddResolved(const SimpleCommand& sc, Unwrapped u, int depth, bool name_from_output) {
    Command c;
    c.original = Join(sc.words);
    c.redirects = sc.redirects;
    c.origin = sc.origin;
    c.query_only = u.query_only;
    c.args_from_stdin = u.args_from_stdin;
    c.name_from_output = name_from_output;
    SetStdin(c, sc.piped);
    c.argv = std::move(u.argv);
    if (!c.argv.empty()) {
      Word& w = c.argv[0];
      if (w.Has(kWordCommandSub)) {
        if (auto inner = WholeSubstitution(w.text)) {
          if (auto name = LookedUpName(*inner, depth)) {
            w = Word{*name, 0};
          } else {
            c.name_from_output = true;
          }
        } else if (Basename(w.text).find_first_of("$`()") != std::string_view::npos) {
          c.name_from_output = true;  // "$(printf su)do", $(echo /usr/bin/sudo)
        }
      }
      w.text = std::string(Basename(w.text));
    }
    c.text = Join(c.argv);
    out_.commands.push_back(c);  // a copy: the nested commands below may grow the vector
    if (u.shell_text) AddText(*u.shell_text, depth);
    if (c.argv.empty() || c.query_only) return;
    AddNested(c, depth);
  }

  // Text another shell parses again: sh -c, eval, trap, alias, a here-doc fed to a shell.
  void AddNested(const Command& c, int depth) {
    std::string_view name = c.name();
    InterpreterKind kind = ClassifyInterpreter(c.argv[0], name);
    if (kind == InterpreterKind::kShell || kind == InterpreterKind::kUnknown) {
      Program p = FindProgram(kind, name, c.argv);
      if (p.from == ProgramFrom::kString) {
        AddText(p.word->text, depth);
      } else if (p.from == ProgramFrom::kStdin && c.stdin_source == StdinSource::kHereDoc) {
        AddText(c.stdin_text, depth);
      }
    } else if (name == "eval") {
      AddText(Join(c.argv, 1), depth);
    } else if (name == "trap" && c.argv.size() >= 2 && !c.argv[1].text.starts_with("-")) {
      AddText(c.argv[1].text, depth);
    } else if (name == "alias") {
      for (std::size_t i = 1; i < c.argv.size(); ++i) {
        std::size_t eq = c.argv[i].text.find('=');
        if (eq != std::string::npos) AddText(c.argv[i].text.substr(eq + 1), depth);
      }
    } else if (name == "find") {
      AddExec(c, depth, {"-exec", "-execdir", "-ok", "-okdir"});
    } else if (name == "cordon") {
      AddCordonRun(c, depth);
    }
  }

  // find -exec CMD ... ; : the words up to ";" or "+" are a command.
  void AddExec(const Command& c, int depth, std::initializer_list<std::string_view> starts) {
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      bool start = false;
      for (std::string_view s : starts) start = start || a == s;
      if (!start) continue;
      SimpleCommand sub;
      sub.origin = Origin::kExec;
      for (++i; i < c.argv.size() && c.argv[i].text != ";" && c.argv[i].text != "+"; ++i) {
        sub.words.push_back(c.argv[i]);
      }
      if (!sub.words.empty() && depth + 1 <= kMaxNesting) Add(sub, depth + 1);
    }
  }

  // cordon run [options] -- CMD... and cordon run -c TEXT run a command (inside a sandbox, but
  // the policy still applies to it).
  void AddCordonRun(const Command& c, int depth) {
    if (c.argv.size() < 2 || c.argv[1].text != "run") return;
    for (std::size_t i = 2; i < c.argv.size(); ++i) {
      if (c.argv[i].text == "-c" && i + 1 < c.argv.size()) {
        AddText(c.argv[i + 1].text, depth);
        return;
      }
      if (c.argv[i].text == "--") {
        SimpleCommand sub;
        sub.origin = Origin::kExec;
        sub.words.assign(c.argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, c.argv.end());
        if (!sub.words.empty() && depth + 1 <= kMaxNesting) Add(sub, depth + 1);
        return;
      }
    }
  }

  void AddText(const std::string& text, int depth) {
    Result<Script> script = ParseScript(text, depth + 1, Origin::kShellString);
    if (!script) {
      out_.unparsed.push_back(text);
      return;
    }
    AddScript(*script, depth + 1);
  }

  Analysis& out_;
  std::map<std::string, Variable, std::less<>> vars_;
  int variants_ = 0;
};

}  // namespace

Analysis Analyse(const Script& script, int depth) {
  Analysis out;
  Analyser(out).AddScript(script, depth);
  return out;
}

}  // namespace cordon::policy
