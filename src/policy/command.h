// The parsed form of command text: simple commands made of words after quote removal, with
// enough of their shell context (redirections, pipe input, where they were nested) for the
// default rules. Produced by ParseScript (shell_parser.h), consumed by the normaliser.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::policy {

// What a word contained before quote removal. A rule needs this to tell the literal word
// `sudo` from `$X`, whose value is only known when the shell runs.
enum WordFlag : std::uint16_t {
  kWordQuoted = 1 << 0,      // some part was quoted or backslash-escaped
  kWordParam = 1 << 1,       // an unexpanded $NAME, ${...} or positional parameter
  kWordCommandSub = 1 << 2,  // $(...) or `...` at this word's own level
  kWordProcessSub = 1 << 3,  // <(...) or >(...)
  kWordArith = 1 << 4,       // $((...))
  kWordGlob = 1 << 5,        // an unquoted * ? or [
  kWordBrace = 1 << 6,       // an unquoted {a,b} or {a..b}
  kWordTilde = 1 << 7,       // an unquoted leading ~
};
// Flags whose presence means the word's value is not known from the text.
inline constexpr std::uint16_t kWordDynamic =
    kWordParam | kWordCommandSub | kWordProcessSub | kWordArith;

struct Word {
  // After quote removal. Expansions keep their source text (`$HOME`, `$(date)`), so a rule that
  // compares the text with a command name never matches an expansion by accident.
  std::string text;
  std::uint16_t flags = 0;

  bool Has(std::uint16_t f) const { return (flags & f) != 0; }
  bool Dynamic() const { return Has(kWordDynamic); }
};

enum class RedirectOp {
  kIn,            // <
  kOut,           // >
  kAppend,        // >>
  kClobber,       // >|
  kReadWrite,     // <>
  kDupIn,         // <&
  kDupOut,        // >&  (with a file target bash writes stdout and stderr there)
  kOutErr,        // &>
  kAppendOutErr,  // &>>
  kHereDoc,       // << and <<-
  kHereString,    // <<<
};

struct Redirect {
  RedirectOp op = RedirectOp::kIn;
  int fd = -1;       // the explicit IO number, or -1 for the operator's default
  Word target;       // file, descriptor, here-doc delimiter, or here-string text
  std::string body;  // here-doc body (after <<- tab stripping)

  bool Writes() const;
  // The descriptor this redirection sets: the explicit one or the operator's default.
  int EffectiveFd() const;
};

// Where a simple command was found.
enum class Origin {
  kTop,          // the text itself
  kCommandSub,   // inside $(...) or backquotes
  kProcessSub,   // inside <(...) or >(...)
  kShellString,  // inside a string a shell parses again: sh -c, eval, trap, watch, here-doc
  kExec,         // the command run by find -exec and similar
};

struct SimpleCommand {
  std::vector<Word> words;  // including leading NAME=value assignments
  std::vector<Redirect> redirects;
  bool piped = false;  // stdin comes from a previous pipeline stage
  Origin origin = Origin::kTop;
  // Not a command: the header of "for NAME in WORDS" (or select), recorded so that a loop
  // variable used as a command word ("for c in sudo; do $c x; done") can be resolved.
  // words[0] is NAME, the rest are the list.
  bool loop_header = false;
};

struct Script {
  std::vector<SimpleCommand> commands;
  std::size_t word_count = 0;  // words in all commands, to bound the work on hostile text
};

}  // namespace cordon::policy
