// Shell tokens: words (with quote removal and nested substitutions), control operators and
// redirection operators. The lexer knows nothing of grammar; when a word contains a command or
// process substitution it hands the inner text to a NestedParser, so the commands inside are
// found by the same parser that handles the outer text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cordon/error.h"
#include "policy/command.h"

namespace cordon::policy {

// Implemented by the parser: parses text nested inside a word.
class NestedParser {
 public:
  // Parses the command list that starts at `pos` of the lexer's text (just after "$(" or "<(")
  // up to its closing ")"; returns the position after that ")". `input_piped`: the commands
  // inside read another command's output (the inside of ">(...)").
  [[nodiscard]] virtual Result<std::size_t> ParseParenthesized(std::size_t pos, Origin origin,
                                                               bool input_piped) = 0;
  // Parses a separate text (the body of backquotes after unescaping).
  [[nodiscard]] virtual Result<void> ParseText(std::string text, Origin origin) = 0;

 protected:
  ~NestedParser() = default;
};

enum class TokenKind { kWord, kOperator, kRedirect, kNewline, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  Word word;            // kWord
  std::string_view op;  // kOperator: ";" "&" "&&" "||" "|" "|&" "(" ")" ";;" ";&" ";;&"
  RedirectOp redirect = RedirectOp::kIn;  // kRedirect
  int fd = -1;                            // kRedirect: explicit IO number or -1
  bool strip_tabs = false;                // kRedirect kHereDoc: "<<-"
  std::size_t offset = 0;
};

class Lexer {
 public:
  Lexer(std::string_view text, std::size_t pos, NestedParser& nested)
      : text_(text), pos_(pos), nested_(nested) {}

  [[nodiscard]] Result<Token> Next();

  std::size_t pos() const { return pos_; }
  void set_pos(std::size_t pos) { pos_ = pos; }
  std::string_view text() const { return text_; }

  // Skips blanks and line continuations; returns the next character or '\0' at the end.
  char PeekChar();

  // Scans an arithmetic expression that starts at `pos` (just after "((" or "$((") up to its
  // closing "))"; command substitutions inside it are parsed. Returns the position after "))".
  [[nodiscard]] Result<std::size_t> ScanArithmetic(std::size_t pos);

  // Scans [begin, end) as the body of a here-doc with an unquoted delimiter: only $ expansions,
  // backquotes and backslashes are special there.
  [[nodiscard]] Result<void> ScanHereDoc(std::size_t begin, std::size_t end);

 private:
  [[nodiscard]] Result<void> LexWord(Word& word);
  bool IsArrayAssignmentStart(const Word& word) const;
  [[nodiscard]] Result<void> LexArrayValue(Word& word);
  [[nodiscard]] Result<void> LexSingleQuoted(Word& word);
  [[nodiscard]] Result<void> LexAnsiC(Word& word);
  // Double-quoted text; with `end` set, here-doc mode: runs to `end` and '"' is ordinary.
  [[nodiscard]] Result<void> LexDoubleQuoted(Word& word, std::size_t end);
  [[nodiscard]] Result<void> LexDollar(Word& word, bool quoted);
  [[nodiscard]] Result<void> LexBackquote(Word& word, bool in_double_quotes);
  [[nodiscard]] Result<void> LexBraceParameter(Word& word);
  // Inside ${...} and $((...)): steps over one character, or a whole quoted string, expansion
  // or backquote (whose command substitutions are parsed into `inner`).
  [[nodiscard]] Result<void> StepInsideExpansion(Word& inner);
  [[nodiscard]] Result<void> LexCommandSub(Word& word, std::size_t open, Origin origin);
  [[nodiscard]] Result<void> Enter();
  [[nodiscard]] std::unexpected<Error> Unterminated(std::string_view what, std::size_t at) const;

  std::string_view text_;
  std::size_t pos_;
  NestedParser& nested_;
  int recursion_ = 0;  // bounds ${ ${ ${ ... nesting so hostile text cannot exhaust the stack
};

}  // namespace cordon::policy
