#include "policy/normalise.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "policy/interpreters.h"
#include "policy/shell_parser.h"
#include "policy/variables.h"
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

// Each variable used as a command word multiplies the commands judged; this bounds the total
// (x='$x'-style self references, for loops over loops).
constexpr int kMaxVariants = 256;
// The directories an earlier cd may have left a command in (RecordCd), at most.
constexpr std::size_t kMaxDirectories = 64;

class Analyser {
 public:
  explicit Analyser(Analysis& out) : out_(out) {}

  // After the last AddScript: an operator that went past its bounds makes the text too complex.
  void Finish() {
    if (vars_.TooComplex()) out_.too_complex = true;
  }

  void AddScript(const Script& script, int depth) {
    for (const SimpleCommand& sc : script.commands) {
      if (sc.loop_header) {
        vars_.RecordLoop(sc);
      } else {
        Add(sc, depth);
      }
    }
  }

 private:
  void RecordAssignments(const std::vector<Word>& words, const Unwrapped& u,
                         const std::vector<Redirect>& redirects) {
    if (u.argv.empty()) {
      for (const Word& w : words) {
        if (IsAssignment(w)) vars_.RecordAssignment(w);
      }
      return;
    }
    std::string_view name = Basename(u.argv[0].text);
    if (name == "export" || name == "declare" || name == "local" || name == "readonly" ||
        name == "typeset") {
      for (std::size_t i = 1; i < u.argv.size(); ++i) {
        if (IsAssignment(u.argv[i])) vars_.RecordAssignment(u.argv[i]);
      }
    } else if (name == "set") {
      RecordSet(u.argv);
    } else if (name == "printf") {
      RecordPrintf(u.argv);
    } else if (name == "read") {
      RecordRead(u.argv, redirects);
    }
  }

  // set -- WORDS (or set WORDS, the first not an option): the positional parameters.
  void RecordSet(const std::vector<Word>& argv) {
    if (argv.size() < 2) return;
    std::size_t first = 1;
    if (argv[1].text == "--") {
      first = 2;
    } else if (argv[1].text.starts_with("-") || argv[1].text.starts_with("+")) {
      return;  // options (set -e, set -o pipefail)
    }
    std::vector<std::string> words;
    for (std::size_t i = first; i < argv.size(); ++i) words.push_back(argv[i].text);
    vars_.SetPositional(words);
  }

  // printf -v NAME FORMAT [ARGS]: NAME holds FORMAT when it has no conversion, or the
  // arguments of a lone %s; anything else is not known.
  void RecordPrintf(const std::vector<Word>& argv) {
    if (argv.size() < 4 || argv[1].text != "-v") return;
    const std::string& format = argv[3].text;
    std::string value;
    bool known = !argv[3].Dynamic() && format.find_first_of("%\\") == std::string::npos;
    if (known) {
      value = format;
    } else if (format == "%s") {
      known = true;
      for (std::size_t i = 4; i < argv.size(); ++i) {
        known = known && !argv[i].Dynamic();
        value += argv[i].text;
      }
    }
    vars_.Set(argv[2].text, {value}, !known);
  }

  // read [-r] NAME... <<< WORD (or a here-doc): the names hold the first line's words, the
  // last one the rest.
  void RecordRead(const std::vector<Word>& argv, const std::vector<Redirect>& redirects) {
    std::optional<std::string> line;
    bool dynamic = false;
    for (const Redirect& r : redirects) {
      if (r.EffectiveFd() != 0) continue;
      if (r.op == RedirectOp::kHereString) {
        line = r.target.text;
        dynamic = r.target.Dynamic();
      } else if (r.op == RedirectOp::kHereDoc) {
        line = r.body.substr(0, r.body.find('\n'));
        // An unquoted delimiter expands the body: its values are not known.
        dynamic = !r.target.Has(kWordQuoted) && line->find_first_of("$`") != std::string::npos;
      }
    }
    std::vector<std::string> names;
    for (std::size_t i = 1; i < argv.size(); ++i) {
      if (argv[i].text.starts_with("-")) {
        // -r and -s take nothing; -a, -d, -n, -N, -p, -t, -u take a value.
        if (argv[i].text.find_first_of("adnNptu") != std::string::npos) ++i;
        continue;
      }
      names.push_back(argv[i].text);
    }
    if (names.empty()) names.emplace_back("REPLY");
    const bool known = line.has_value() && !dynamic;
    std::vector<Word> parts = known ? SplitValue(*line) : std::vector<Word>{};
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::string value;
      if (i + 1 < names.size()) {
        value = i < parts.size() ? parts[i].text : std::string();
      } else {
        for (std::size_t k = i; k < parts.size(); ++k) value += (k > i ? " " : "") + parts[k].text;
      }
      vars_.Set(names[i], {value}, !known);
    }
  }

  // A variable that may hold several values (VariableTable: every value assigned to it):
  // the command is judged once with each combination, the budget spent on each; past it the
  // text is too complex rather than judged on some of its values only.
  void Add(const SimpleCommand& original, int depth) {
    std::vector<std::string> several;
    for (const Word& w : original.words) {
      if (!w.Has(kWordParam)) continue;
      for (std::string& name : vars_.SeveralValued(w.text)) {
        if (std::find(several.begin(), several.end(), name) == several.end()) {
          several.push_back(std::move(name));
        }
      }
    }
    AddEachValue(original, depth, several, 0);
  }

  void AddEachValue(const SimpleCommand& sc, int depth, const std::vector<std::string>& names,
                    std::size_t next) {
    if (next == names.size()) {
      AddOne(sc, depth);
      return;
    }
    const Variable* v = vars_.Find(names[next]);
    const std::vector<std::string> values = v != nullptr ? v->values : std::vector<std::string>{};
    for (const std::string& value : values) {
      if (++variants_ > kMaxVariants) {
        out_.too_complex = true;
        return;
      }
      Variable before = vars_.Pin(names[next], value);
      AddEachValue(sc, depth, names, next + 1);
      vars_.Unpin(names[next], std::move(before), value);
    }
  }

  void AddOne(const SimpleCommand& original, int depth) {
    SimpleCommand split_ifs;
    const bool has_ifs = std::any_of(
        original.words.begin(), original.words.end(),
        [](const Word& w) { return w.Has(kWordParam) && w.text.find("IFS") != std::string::npos; });
    if (has_ifs) {
      split_ifs = original;
      split_ifs.words = SplitOnIfs(original.words);
    }
    const SimpleCommand& sc = has_ifs ? split_ifs : original;
    Unwrapped u = Unwrap(sc.words);
    RecordAssignments(sc.words, u, sc.redirects);
    if (!u.argv.empty()) {
      if (auto var = WholeParameter(u.argv[0])) {
        auto it = vars_.Find(*var);
        if (it != nullptr && !it->from_output && depth < kMaxNesting && variants_ < kMaxVariants) {
          // Judge the command once for each value the variable may have; for one element of
          // an array, once for each of its words.
          std::vector<std::vector<Word>> heads;
          for (const std::string& value : it->values) {
            std::vector<Word> words = SplitValue(value);
            if (!OneElement(u.argv[0])) {
              heads.push_back(std::move(words));
              continue;
            }
            for (Word& word : words) heads.push_back({std::move(word)});
          }
          for (std::vector<Word>& head : heads) {
            if (++variants_ > kMaxVariants) {
              out_.too_complex = true;
              return;
            }
            SimpleCommand variant = sc;
            variant.words = std::move(head);
            for (std::size_t i = 1; i < u.argv.size(); ++i) variant.words.push_back(u.argv[i]);
            if (variant.words.empty()) continue;
            AddResolved(variant, Unwrap(variant.words), depth + 1, false);
          }
          return;
        }
        AddResolved(sc, std::move(u), depth, it != nullptr && it->from_output);
        return;
      }
      const Word& w = u.argv[0];
      if (w.Has(kWordParam) && !w.Has(kWordCommandSub) && variants_ < kMaxVariants) {
        std::optional<std::string> shown = vars_.WithUnknownExpansionsEmpty(w.text);
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
    if (out_.too_complex || u.too_complex || out_.commands.size() >= kMaxCommands) {
      out_.too_complex = true;
      return;
    }
    Command c;
    c.original = Join(sc.words);
    c.redirects = sc.redirects;
    c.origin = sc.origin;
    c.query_only = u.query_only;
    c.known_cwd = cwds_.empty() ? std::string() : cwds_.front();
    c.args_from_stdin = u.args_from_stdin;
    c.stdin_replace = std::move(u.stdin_replace);
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
    if (c.name() == "rm" || c.name() == "find") ExpandKnownOperands(c);
    if (c.name() == "cd") RecordCd(c);
    c.text = Join(c.argv);
    if (c.name() == "rm" || c.name() == "find") {
      // Judged in every directory an earlier cd may have left it in (RecordCd).
      for (std::size_t i = 1; i < cwds_.size(); ++i) {
        Command elsewhere = c;
        elsewhere.known_cwd = cwds_[i];
        out_.commands.push_back(std::move(elsewhere));
      }
    }
    out_.commands.push_back(c);  // a copy: the nested commands below may grow the vector
    if (u.shell_text) AddText(*u.shell_text, depth);
    if (c.argv.empty() || c.query_only) return;
    AddNested(c, depth);
  }

  // The operands of a deleting command with their variables replaced where the text says what
  // they hold (R=/; rm -rf $R/*): judged by what they reach.
  void ExpandKnownOperands(Command& c) const {
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      Word& w = c.argv[i];
      if (!w.Has(kWordParam) || w.Has(kWordCommandSub | kWordProcessSub)) continue;
      bool all_known = true;
      std::optional<std::string> value = vars_.WithUnknownExpansionsEmpty(w.text, 0, &all_known);
      if (value && all_known) w.text = *value;
    }
  }

  // cd DIR: where later relative paths of the same text may lie, when DIR says it (absolute,
  // ~, or relative to a directory known already). Like a variable's values these accumulate:
  // a cd in a subshell, a pipeline stage or a branch that is not taken leaves the directory as
  // it was, which the text alone cannot tell, so each directory stays possible. A cd to a place
  // the text does not say adds nothing known (a relative path there is not judged).
  void RecordCd(const Command& c) {
    std::size_t i = 1;
    while (i < c.argv.size() && (c.argv[i].text == "-L" || c.argv[i].text == "-P")) ++i;
    if (i < c.argv.size() && c.argv[i].text == "--") ++i;
    std::vector<std::string> reached;
    if (i >= c.argv.size()) {
      reached.emplace_back("~");
    } else if (const Word& dir = c.argv[i]; dir.Dynamic() || dir.text == "-" || dir.text.empty()) {
      // Not known.
    } else if (dir.text.starts_with("/") || dir.text == "~" || dir.text.starts_with("~/")) {
      reached.push_back(dir.text);
    } else {
      for (const std::string& from : cwds_) reached.push_back(from + "/" + dir.text);
    }
    for (std::string& place : reached) {
      if (std::find(cwds_.begin(), cwds_.end(), place) != cwds_.end()) continue;
      if (cwds_.size() == kMaxDirectories) {
        out_.too_complex = true;
        return;
      }
      cwds_.push_back(std::move(place));
    }
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
    reparsed_bytes_ += text.size();
    if (out_.too_complex || reparsed_bytes_ > kMaxReparsedBytes) {
      out_.too_complex = true;
      return;
    }
    Result<Script> script = ParseScript(text, depth + 1, Origin::kShellString);
    if (!script && script.error().code == ErrorCode::kUnavailable) {
      out_.too_complex = true;
      return;
    }
    if (!script) {
      out_.unparsed.push_back(text);
      return;
    }
    AddScript(*script, depth + 1);
  }

  Analysis& out_;
  VariableTable vars_;
  // Every directory the commands that follow may run in, as far as the text says (RecordCd);
  // each is a Command::known_cwd of a deleting command.
  std::vector<std::string> cwds_;
  std::size_t reparsed_bytes_ = 0;
  int variants_ = 0;
};

}  // namespace

Analysis Analyse(const Script& script, int depth) {
  Analysis out;
  Analyser analyser(out);
  analyser.AddScript(script, depth);
  analyser.Finish();
  return out;
}

}  // namespace cordon::policy
