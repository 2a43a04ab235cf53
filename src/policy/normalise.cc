#include "policy/normalise.h"

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

class Analyser {
 public:
  explicit Analyser(Analysis& out) : out_(out) {}

  void AddScript(const Script& script, int depth) {
    for (const SimpleCommand& sc : script.commands) Add(sc, depth);
  }

 private:
  void Add(const SimpleCommand& sc, int depth) {
    Command c;
    c.original = Join(sc.words);
    c.redirects = sc.redirects;
    c.origin = sc.origin;
    SetStdin(c, sc.piped);
    Unwrapped u = Unwrap(sc.words);
    c.argv = std::move(u.argv);
    c.query_only = u.query_only;
    c.text = Join(c.argv);
    out_.commands.push_back(c);  // a copy: the nested commands below may grow the vector
    if (u.shell_text) AddText(*u.shell_text, depth);
    if (c.argv.empty() || c.query_only) return;
    AddNested(c, depth);
  }

  // Text another shell parses again: sh -c, eval, trap, a here-doc fed to a shell.
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
    } else if (name == "find") {
      AddFindExec(c, depth);
    }
  }

  void AddFindExec(const Command& c, int depth) {
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      const std::string& a = c.argv[i].text;
      if (a != "-exec" && a != "-execdir" && a != "-ok" && a != "-okdir") continue;
      SimpleCommand sub;
      sub.origin = Origin::kExec;
      for (++i; i < c.argv.size() && c.argv[i].text != ";" && c.argv[i].text != "+"; ++i) {
        sub.words.push_back(c.argv[i]);
      }
      if (!sub.words.empty() && depth + 1 <= kMaxNesting) Add(sub, depth + 1);
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
};

}  // namespace

Analysis Analyse(const Script& script, int depth) {
  Analysis out;
  Analyser(out).AddScript(script, depth);
  return out;
}

}  // namespace cordon::policy
