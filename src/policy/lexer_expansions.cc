// The expansion half of the lexer: $NAME, ${...}, $(...), `...`, $((...)). Command
// substitutions are handed to the NestedParser so the commands inside are found too.
#include <fmt/format.h>

#include "policy/lexer.h"
#include "policy/lexer_internal.h"

namespace cordon::policy {

using namespace lexer_internal;  // NOLINT(google-build-using-namespace): own helpers

Result<void> Lexer::LexDollar(Word& word, bool quoted) {
  const std::size_t start = pos_;
  char n = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
  if (n == '\'' && !quoted) {
    pos_ += 2;
    return LexAnsiC(word);
  }
  if (n == '"' && !quoted) {  // $"..." (locale translation) quotes like "..."
    pos_ += 2;
    word.flags |= kWordQuoted;
    return LexDoubleQuoted(word, std::string_view::npos);
  }
  if (n == '(') {
    if (pos_ + 2 < text_.size() && text_[pos_ + 2] == '(') {
      // POSIX resolves "$((" as arithmetic; a command substitution that starts with a subshell
      // must be written "$( (". Text that is not closed by "))" is a parse error.
      CORDON_TRY(std::size_t end, ScanArithmetic(pos_ + 3));
      word.text.append(text_.substr(start, end - start));
      word.flags |= kWordArith;
      pos_ = end;
      return {};
    }
    return LexCommandSub(word, pos_, Origin::kCommandSub);
  }
  if (n == '{') return LexBraceParameter(word);
  if (IsNameStart(n)) {
    std::size_t i = pos_ + 1;
    while (i < text_.size() && IsNameChar(text_[i])) ++i;
    word.text.append(text_.substr(start, i - start));
    word.flags |= kWordParam;
    pos_ = i;
    return {};
  }
  if ((n >= '0' && n <= '9') || n == '@' || n == '*' || n == '#' || n == '?' || n == '-' ||
      n == '$' || n == '!') {
    word.text.append(text_.substr(start, 2));
    word.flags |= kWordParam;
    pos_ += 2;
    return {};
  }
  word.text += '$';
  ++pos_;
  return {};
}

Result<void> Lexer::LexCommandSub(Word& word, std::size_t open, Origin origin) {
  const bool output_substitution = origin == Origin::kProcessSub && text_[open] == '>';
  CORDON_TRY(std::size_t end, nested_.ParseParenthesized(open + 2, origin, output_substitution));
  word.text.append(text_.substr(open, end - open));
  word.flags |= origin == Origin::kProcessSub ? kWordProcessSub : kWordCommandSub;
  pos_ = end;
  return {};
}

Result<void> Lexer::LexBackquote(Word& word, bool in_double_quotes) {
  const std::size_t start = pos_;
  std::string body;
  std::size_t i = pos_ + 1;
  for (; i < text_.size() && text_[i] != '`'; ++i) {
    char c = text_[i];
    if (c == '\\' && i + 1 < text_.size()) {
      char n = text_[i + 1];
      if (n != '$' && n != '`' && n != '\\' && !(in_double_quotes && n == '"')) body += '\\';
      body += n;
      ++i;
      continue;
    }
    body += c;
  }
  if (i >= text_.size()) return Unterminated("backquote", start);
  CORDON_TRY_VOID(nested_.ParseText(std::move(body), Origin::kCommandSub));
  word.text.append(text_.substr(start, i + 1 - start));
  word.flags |= kWordCommandSub;
  pos_ = i + 1;
  return {};
}

Result<void> Lexer::LexBraceParameter(Word& word) {
  CORDON_TRY_VOID(Enter());
  RecursionGuard guard{recursion_};
  const std::size_t start = pos_;
  pos_ += 2;
  Word inner;  // collects flags of nested expansions, as in ${X:-$(cmd)}
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '}') {
      ++pos_;
      word.text.append(text_.substr(start, pos_ - start));
      word.flags |= kWordParam | (inner.flags & kWordDynamic);
      return {};
    }
    CORDON_TRY_VOID(StepInsideExpansion(inner));
  }
  return Unterminated("${...} expansion", start);
}

Result<void> Lexer::StepInsideExpansion(Word& inner) {
  switch (text_[pos_]) {
    case '\\':
      pos_ += 2;
      return {};
    case '\'':
      ++pos_;
      return LexSingleQuoted(inner);
    case '"':
      ++pos_;
      return LexDoubleQuoted(inner, std::string_view::npos);
    case '$':
      return LexDollar(inner, true);
    case '`':
      return LexBackquote(inner, false);
    default:
      ++pos_;
      return {};
  }
}

Result<std::size_t> Lexer::ScanArithmetic(std::size_t pos) {
  CORDON_TRY_VOID(Enter());
  RecursionGuard guard{recursion_};
  const std::size_t start = pos;
  pos_ = pos;
  int depth = 0;
  Word inner;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '(') {
      ++depth;
      ++pos_;
    } else if (c == ')') {
      if (depth > 0) {
        --depth;
        ++pos_;
      } else if (pos_ + 1 < text_.size() && text_[pos_ + 1] == ')') {
        return pos_ + 2;
      } else {
        return Fail(
            ErrorCode::kInvalidArgument,
            fmt::format("arithmetic expression at offset {} is not closed by \"))\"", start));
      }
    } else {
      CORDON_TRY_VOID(StepInsideExpansion(inner));
    }
  }
  return Unterminated("arithmetic expression", start);
}

}  // namespace cordon::policy
