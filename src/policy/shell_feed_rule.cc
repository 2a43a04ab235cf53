// The shell-feed rule: text that a shell or interpreter runs without cordon seeing it first.
// Scope (docs/policy.md): a shell or script interpreter whose program comes from a pipe or
// a substitution (curl ... | sh, python3 - < <(...)), from a process substitution file
// (bash <(curl ...)), or from a command substitution inside its -c/-e string
// (sh -c "$(curl ...)"); eval and source of substituted text; and, inside text a shell parses
// again, a command word known only at run time (eval "$X", sh -c '"$@"').
#include "policy/default_rules.h"
#include "policy/interpreters.h"

namespace cordon::policy {
namespace {

bool ReadsOtherCommandsOutput(StdinSource s) {
  return s == StdinSource::kPipe || s == StdinSource::kSubstitution;
}

bool IsStdinPath(std::string_view p) {
  return p == "/dev/stdin" || p == "/dev/fd/0" || p == "/proc/self/fd/0" || p == "-";
}

// `$(cmd)` or `\`cmd\`` as the whole word: the file name itself comes from another command.
bool IsWholeSubstitution(const Word& w) {
  const std::string& t = w.text;
  return (t.starts_with("$(") && t.ends_with(")")) ||
         (t.size() > 1 && t.starts_with("`") && t.ends_with("`"));
}

RuleHit Hit(const Command& c, std::string_view what) {
  return MakeHit(rule::kShellFeed, std::string(c.name()) + " " + std::string(what));
}

}  // namespace

std::optional<RuleHit> CheckShellFeed(const Command& c) {
  std::string_view name = c.name();
  const Word& w = c.argv[0];
  if (c.origin == Origin::kShellString && w.Dynamic()) {
    return Hit(c, "(a command name only known at run time, in text a shell parses again)");
  }
  InterpreterKind kind = ClassifyInterpreter(w, name);
  if (kind != InterpreterKind::kNone) {
    Program p = FindProgram(kind, name, c.argv);
    switch (p.from) {
      case ProgramFrom::kStdin:
        if (ReadsOtherCommandsOutput(c.stdin_source)) {
          return Hit(c, "reading its program from another command's output");
        }
        break;
      case ProgramFrom::kString:
        if (p.word->Has(kWordCommandSub)) return Hit(c, "-c \"$(...)\"");
        break;
      case ProgramFrom::kFile:
        if (p.word->Has(kWordProcessSub)) return Hit(c, "<(...)");
        if (IsStdinPath(p.word->text) && ReadsOtherCommandsOutput(c.stdin_source)) {
          return Hit(c, p.word->text);
        }
        break;
      case ProgramFrom::kMissing:
        break;
    }
  }
  if (name == "eval") {
    for (std::size_t i = 1; i < c.argv.size(); ++i) {
      if (c.argv[i].Has(kWordCommandSub | kWordProcessSub)) return Hit(c, "\"$(...)\"");
    }
  }
  if ((name == "source" || name == ".") && c.argv.size() > 1) {
    const Word& file = c.argv[1];
    if (file.Has(kWordProcessSub) || IsWholeSubstitution(file)) return Hit(c, file.text);
    if (IsStdinPath(file.text) && ReadsOtherCommandsOutput(c.stdin_source)) {
      return Hit(c, file.text);
    }
  }
  return std::nullopt;
}

}  // namespace cordon::policy
