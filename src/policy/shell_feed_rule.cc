// The shell-feed rule: text that a shell or interpreter runs without cordon seeing it first.
// Scope (docs/policy.md): a shell or script interpreter whose program comes from a pipe or a
// substitution (curl ... | sh, python3 - < <(...)), from a process substitution file
// (bash <(curl ...)), from a file downloaded earlier in the same text (curl -o x.sh URL &&
// sh x.sh), from a command substitution inside its -c/-e string (sh -c "$(curl ...)"), or from
// xargs (xargs sh -c); eval and source of substituted text; and a command name that is another
// command's output ($(curl ...) args), or only known at run time inside text a shell parses
// again (eval "$X", sh -c '"$@"').
#include "policy/default_rules.h"
#include "policy/interpreters.h"
#include "policy/wrappers.h"

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

// "N" of `<&N` naming a descriptor RuleContext::generated_fds holds.
bool ReadsGeneratedFd(std::string_view target, const RuleContext& context) {
  if (target.empty() || target.size() > 3) return false;
  int fd = 0;
  for (char ch : target) {
    if (ch < '0' || ch > '9') return false;
    fd = fd * 10 + (ch - '0');
  }
  return context.generated_fds.contains(fd);
}

bool IsDownloaded(std::string_view path, const RuleContext& context) {
  return context.downloaded.contains(Basename(path));
}

// The short options of curl and wget that take a value: in a cluster ("-sSLo F", "-Lofile",
// "-qO F") the first of them takes the rest of the word, or the next word when nothing is left.
constexpr std::string_view kCurlValueOptions = "AbcCdDeEFhHKmoPQrtTuUwxXyYz";
constexpr std::string_view kWgetValueOptions = "aABDeiIlnoOPQRtTUwX";

// The value of option `letter` (or `long_opt`) of `c`, however written: "-o F", "-oF", in a
// cluster ("-Lo F", "-sSLoF"), "--output F" or "--output=F". `value_letters`: the short options
// that take a value, which end a cluster.
void CollectOption(const Command& c, char letter, std::string_view value_letters,
                   std::string_view long_opt, std::set<std::string, std::less<>>& out) {
  for (std::size_t i = 1; i < c.argv.size(); ++i) {
    std::string_view a = c.argv[i].text;
    std::string_view value;
    if (a == "--") break;
    if (a == long_opt && i + 1 < c.argv.size()) {
      value = c.argv[i + 1].text;
    } else if (a.starts_with(long_opt) && a.size() > long_opt.size() && a[long_opt.size()] == '=') {
      value = a.substr(long_opt.size() + 1);
    } else if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
      for (std::size_t k = 1; k < a.size(); ++k) {
        if (value_letters.find(a[k]) == std::string_view::npos) continue;
        if (a[k] == letter) {
          value = k + 1 < a.size()        ? a.substr(k + 1)
                  : i + 1 < c.argv.size() ? std::string_view(c.argv[i + 1].text)
                                          : std::string_view();
        }
        break;  // the rest of the word is that option's value
      }
    }
    if (!value.empty() && value != "-") out.emplace(Basename(value));
  }
}

// The last path segment of each URL argument: what curl -O and plain wget name the file.
void CollectUrlNames(const Command& c, std::set<std::string, std::less<>>& out) {
  for (std::size_t i = 1; i < c.argv.size(); ++i) {
    std::string_view a = c.argv[i].text;
    if (a.find("://") == std::string_view::npos) continue;
    a = a.substr(0, a.find_first_of("?#"));
    std::string_view base = Basename(a);
    if (!base.empty() && base.find("://") == std::string_view::npos) out.emplace(base);
  }
}

}  // namespace

RuleContext MakeRuleContext(const Analysis& analysis) {
  RuleContext context;
  for (const Command& c : analysis.commands) {
    std::string_view name = c.name();
    if (name == "exec") {
      for (const Redirect& r : c.redirects) {
        const bool reads = r.op == RedirectOp::kIn || r.op == RedirectOp::kReadWrite;
        if (reads && r.fd > 2 &&
            (r.target.Has(kWordProcessSub | kWordCommandSub) ||
             context.downloaded.contains(Basename(r.target.text)))) {
          context.generated_fds.insert(r.fd);
        }
      }
    }
    bool curl = name == "curl";
    bool wget = name == "wget" || name == "wget2";
    if (!curl && !wget && name != "fetch" && name != "aria2c" && name != "http" && name != "xh") {
      continue;
    }
    if (curl) CollectOption(c, 'o', kCurlValueOptions, "--output", context.downloaded);
    if (wget) CollectOption(c, 'O', kWgetValueOptions, "--output-document", context.downloaded);
    bool remote_name = wget;
    for (const Word& w : c.argv) {
      bool cluster = w.text.size() > 1 && w.text[0] == '-' && w.text[1] != '-';
      remote_name = remote_name || (cluster && w.text.find('O') != std::string::npos) ||
                    w.text == "--remote-name";
    }
    if (remote_name) CollectUrlNames(c, context.downloaded);
    for (const Redirect& r : c.redirects) {
      if (r.Writes() && r.EffectiveFd() == 1) context.downloaded.emplace(Basename(r.target.text));
    }
  }
  return context;
}

std::optional<RuleHit> CheckShellFeed(const Command& c, const RuleContext& context) {
  std::string_view name = c.name();
  const Word& w = c.argv[0];
  if (c.name_from_output) return Hit(c, "(the command name is another command's output)");
  if (c.origin == Origin::kShellString && w.Dynamic()) {
    return Hit(c, "(a command name only known at run time, in text a shell parses again)");
  }
  if (IsDownloaded(name, context) && c.original.find('/') != std::string::npos) {
    return Hit(c, "(runs a file downloaded by the same command text)");
  }
  InterpreterKind kind = ClassifyInterpreter(w, name);
  if (kind != InterpreterKind::kNone) {
    Program p = FindProgram(kind, name, c.argv);
    switch (p.from) {
      case ProgramFrom::kStdin:
        if (ReadsOtherCommandsOutput(c.stdin_source)) {
          return Hit(c, "reading its program from another command's output");
        }
        for (const Redirect& r : c.redirects) {
          if (r.op == RedirectOp::kDupIn && r.EffectiveFd() == 0 &&
              ReadsGeneratedFd(r.target.text, context)) {
            return Hit(c,
                       "<&" + r.target.text + " (a descriptor holding another command's output)");
          }
        }
        break;
      case ProgramFrom::kString:
        if (p.word->Has(kWordCommandSub)) return Hit(c, "-c \"$(...)\"");
        if (c.args_from_stdin && !c.stdin_replace.empty() && p.word->text == c.stdin_replace &&
            ReadsOtherCommandsOutput(c.stdin_source)) {
          return Hit(c, "-c " + c.stdin_replace + " (program text from xargs input)");
        }
        break;
      case ProgramFrom::kFile:
        if (p.word->Has(kWordProcessSub)) return Hit(c, "<(...)");
        if (IsStdinPath(p.word->text) && ReadsOtherCommandsOutput(c.stdin_source)) {
          return Hit(c, p.word->text);
        }
        if (IsDownloaded(p.word->text, context)) return Hit(c, p.word->text + " (downloaded)");
        break;
      case ProgramFrom::kMissing:
        if (c.args_from_stdin) return Hit(c, "(program text from xargs input)");
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
    if (IsDownloaded(file.text, context)) return Hit(c, file.text + " (downloaded)");
  }
  return std::nullopt;
}

}  // namespace cordon::policy
