#include "policy/lexer.h"

#include <fmt/format.h>

#include "policy/ansi_c_quote.h"
#include "policy/lexer_internal.h"

namespace cordon::policy {

using namespace lexer_internal;  // NOLINT(google-build-using-namespace): own helpers
namespace {

struct OpSpelling {
  std::string_view text;
  RedirectOp op;
  bool strip_tabs;
};

// Longest spellings first, so "<<<" is not read as "<<" followed by "<".
constexpr OpSpelling kRedirects[] = {
    {"<<<", RedirectOp::kHereString, false},   {"<<-", RedirectOp::kHereDoc, true},
    {"<<", RedirectOp::kHereDoc, false},       {"<>", RedirectOp::kReadWrite, false},
    {"<&", RedirectOp::kDupIn, false},         {"<", RedirectOp::kIn, false},
    {">>", RedirectOp::kAppend, false},        {">&", RedirectOp::kDupOut, false},
    {">|", RedirectOp::kClobber, false},       {">", RedirectOp::kOut, false},
    {"&>>", RedirectOp::kAppendOutErr, false}, {"&>", RedirectOp::kOutErr, false},
};

constexpr std::string_view kOperators[] = {";;&", ";;", ";&", ";", "&&", "&",
                                           "||",  "|&", "|",  "(", ")"};

}  // namespace

std::unexpected<Error> Lexer::Unterminated(std::string_view what, std::size_t at) const {
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("unterminated {} starting at offset {}", what, at));
}

Result<void> Lexer::Enter() {
  if (++recursion_ > kMaxRecursion) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("quotes and expansions nested deeper than {} at offset {}",
                            kMaxRecursion, pos_));
  }
  return {};
}

char Lexer::PeekChar() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++pos_;
    } else if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
      pos_ += 2;
    } else {
      return c;
    }
  }
  return '\0';
}

Result<Token> Lexer::Next() {
  Token tok;
  for (;;) {
    char c = PeekChar();
    tok.offset = pos_;
    if (pos_ >= text_.size()) {
      tok.kind = TokenKind::kEnd;
      return tok;
    }
    if (c != '#') break;
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }
  std::string_view rest = text_.substr(pos_);
  if (rest[0] == '\n') {
    ++pos_;
    tok.kind = TokenKind::kNewline;
    return tok;
  }
  if ((rest[0] == '<' || rest[0] == '>') && rest.size() > 1 && rest[1] == '(') {
    tok.kind = TokenKind::kWord;
    CORDON_TRY_VOID(LexCommandSub(tok.word, pos_, Origin::kProcessSub));
    return tok;
  }
  // An IO number: digits written directly before a redirection operator ("2>", "10<&0").
  std::size_t digits = 0;
  while (digits < rest.size() && digits < 4 && rest[digits] >= '0' && rest[digits] <= '9') {
    ++digits;
  }
  std::size_t op_at = 0;
  if (digits > 0 && digits < rest.size() && (rest[digits] == '<' || rest[digits] == '>')) {
    op_at = digits;
    tok.fd = 0;
    for (std::size_t i = 0; i < digits; ++i) tok.fd = tok.fd * 10 + (rest[i] - '0');
  }
  for (const OpSpelling& r : kRedirects) {
    if (rest.substr(op_at).starts_with(r.text)) {
      tok.kind = TokenKind::kRedirect;
      tok.redirect = r.op;
      tok.strip_tabs = r.strip_tabs;
      pos_ += op_at + r.text.size();
      return tok;
    }
  }
  tok.fd = -1;
  for (std::string_view op : kOperators) {
    if (rest.starts_with(op)) {
      tok.kind = TokenKind::kOperator;
      tok.op = op;
      pos_ += op.size();
      return tok;
    }
  }
  tok.kind = TokenKind::kWord;
  CORDON_TRY_VOID(LexWord(tok.word));
  return tok;
}

Result<void> Lexer::LexWord(Word& word) {
  int brace_depth = 0;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '(' && IsArrayAssignmentStart(word)) {
      CORDON_TRY_VOID(LexArrayValue(word));
      continue;
    }
    if (IsMeta(c)) return {};
    switch (c) {
      case '\\':
        if (pos_ + 1 >= text_.size()) {
          word.text += '\\';
          ++pos_;
        } else if (text_[pos_ + 1] == '\n') {
          pos_ += 2;  // line continuation
        } else {
          word.text += text_[pos_ + 1];
          word.flags |= kWordQuoted;
          pos_ += 2;
        }
        continue;
      case '\'':
        ++pos_;
        CORDON_TRY_VOID(LexSingleQuoted(word));
        continue;
      case '"':
        ++pos_;
        word.flags |= kWordQuoted;
        CORDON_TRY_VOID(LexDoubleQuoted(word, std::string_view::npos));
        continue;
      case '$':
        CORDON_TRY_VOID(LexDollar(word, false));
        continue;
      case '`':
        CORDON_TRY_VOID(LexBackquote(word, false));
        continue;
      case '*':
      case '?':
      case '[':
        word.flags |= kWordGlob;
        break;
      case '{':
        ++brace_depth;
        break;
      case '}':
        if (brace_depth > 0) --brace_depth;
        break;
      case ',':
        if (brace_depth > 0) word.flags |= kWordBrace;
        break;
      case '.':
        if (brace_depth > 0 && pos_ + 1 < text_.size() && text_[pos_ + 1] == '.') {
          word.flags |= kWordBrace;
        }
        break;
      case '~':
        if (word.text.empty() && word.flags == 0) word.flags |= kWordTilde;
        break;
      default:
        break;
    }
    word.text += c;
    ++pos_;
  }
  return {};
}

// NAME=( or NAME+=( written without quotes: a bash array assignment.
bool Lexer::IsArrayAssignmentStart(const Word& word) const {
  if (word.Has(kWordQuoted)) return false;
  std::string_view t = word.text;
  if (!t.ends_with("=")) return false;
  t.remove_suffix(1);
  if (t.ends_with("+")) t.remove_suffix(1);
  if (t.empty() || !IsNameStart(t[0])) return false;
  for (char c : t) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

// The elements of NAME=(a "b c" $(d)) are words (their substitutions run); the whole value is
// kept as "(a b c $(d))" in the assignment word.
Result<void> Lexer::LexArrayValue(Word& word) {
  CORDON_TRY_VOID(Enter());
  RecursionGuard guard{recursion_};
  const std::size_t start = pos_;
  ++pos_;
  word.text += '(';
  bool first = true;
  for (;;) {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
    if (pos_ >= text_.size()) return Unterminated("array assignment", start);
    if (text_[pos_] == ')') {
      ++pos_;
      word.text += ')';
      return {};
    }
    if (text_[pos_] == '#') {  // a comment inside a multi-line array
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      continue;
    }
    Word element;
    std::size_t before = pos_;
    CORDON_TRY_VOID(LexWord(element));
    if (pos_ == before) {
      return Fail(
          ErrorCode::kInvalidArgument,
          fmt::format("unexpected \"{}\" in array assignment at offset {}", text_[pos_], pos_));
    }
    if (!first) word.text += ' ';
    first = false;
    word.text += element.text;
    word.flags |= element.flags & (kWordDynamic | kWordQuoted);
  }
}

Result<void> Lexer::LexSingleQuoted(Word& word) {
  std::size_t close = text_.find('\'', pos_);
  if (close == std::string_view::npos) return Unterminated("single quote", pos_ - 1);
  word.text.append(text_.substr(pos_, close - pos_));
  word.flags |= kWordQuoted;
  pos_ = close + 1;
  return {};
}

Result<void> Lexer::LexAnsiC(Word& word) {
  std::size_t i = pos_;
  while (i < text_.size() && text_[i] != '\'') i += (text_[i] == '\\') ? 2 : 1;
  if (i >= text_.size()) return Unterminated("$'...' quote", pos_ - 2);
  word.text += DecodeAnsiC(text_.substr(pos_, i - pos_));
  word.flags |= kWordQuoted;
  pos_ = i + 1;
  return {};
}

Result<void> Lexer::LexDoubleQuoted(Word& word, std::size_t end) {
  CORDON_TRY_VOID(Enter());
  RecursionGuard guard{recursion_};
  const bool here_doc = end != std::string_view::npos;
  const std::size_t start = pos_;
  const std::size_t limit = here_doc ? end : text_.size();
  while (pos_ < limit) {
    char c = text_[pos_];
    if (c == '"' && !here_doc) {
      ++pos_;
      return {};
    }
    if (c == '\\' && pos_ + 1 < limit) {
      char n = text_[pos_ + 1];
      if (n == '$' || n == '`' || n == '\\' || n == '\n' || (n == '"' && !here_doc)) {
        if (n != '\n') word.text += n;
        pos_ += 2;
        continue;
      }
    } else if (c == '$') {
      CORDON_TRY_VOID(LexDollar(word, true));
      continue;
    } else if (c == '`') {
      CORDON_TRY_VOID(LexBackquote(word, !here_doc));
      continue;
    }
    word.text += c;
    ++pos_;
  }
  if (here_doc) return {};
  return Unterminated("double quote", start - 1);
}

Result<void> Lexer::ScanHereDoc(std::size_t begin, std::size_t end) {
  pos_ = begin;
  Word body;
  return LexDoubleQuoted(body, end);
}

}  // namespace cordon::policy
