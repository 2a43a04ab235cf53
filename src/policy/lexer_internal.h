// Helpers shared by the two halves of the lexer (lexer.cc, lexer_expansions.cc).
#pragma once

namespace cordon::policy::lexer_internal {

// Deep enough for any real command; shallow enough that hostile nesting cannot overflow the
// stack (each level is a few hundred bytes of frames).
inline constexpr int kMaxRecursion = 64;

inline bool IsMeta(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case ';':
    case '&':
    case '|':
    case '<':
    case '>':
    case '(':
    case ')':
      return true;
    default:
      return false;
  }
}

inline bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

// Undoes one Lexer::Enter() when a recursive lexing function returns.
struct RecursionGuard {
  int& depth;
  ~RecursionGuard() { --depth; }
};

}  // namespace cordon::policy::lexer_internal
