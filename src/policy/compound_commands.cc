// Compound commands: which words are reserved, and the headers of for, select and case,
// whose words are not commands (substitutions inside them still are).
#include "policy/parser_internal.h"

namespace cordon::policy::parser_internal {

Result<bool> Parser::HandleReservedWord(const Token& tok) {
  const std::string& w = tok.word.text;
  if (w == "if") {
    PushFrame('i');
  } else if (w == "while" || w == "until") {
    PushFrame('l');
  } else if (w == "then" || w == "elif" || w == "else") {
    CORDON_TRY_VOID(Expect('i', w, tok.offset));
  } else if (w == "do") {
    CORDON_TRY_VOID(Expect('l', w, tok.offset));
  } else if (w == "fi") {
    CORDON_TRY_VOID(Close('i', w, tok.offset));
  } else if (w == "done") {
    CORDON_TRY_VOID(Close('l', w, tok.offset));
  } else if (w == "esac") {
    CORDON_TRY_VOID(Close('c', w, tok.offset));
  } else if (w == "{") {
    PushFrame('{');
  } else if (w == "}") {
    CORDON_TRY_VOID(Close('{', w, tok.offset));
  } else if (w == "for" || w == "select") {
    PushFrame('l');
    CORDON_TRY_VOID(SkipForHeader());
  } else if (w == "case") {
    CORDON_TRY_VOID(ReadCaseHeader());
  } else if (w == "function") {
    CORDON_TRY(Token name, NextToken());
    if (name.kind != TokenKind::kWord)
      return SyntaxError("\"function\" without a name", name.offset);
    CORDON_TRY(Token next, NextToken());
    if (next.kind == TokenKind::kOperator && next.op == "(") {
      CORDON_TRY(Token close, NextToken());
      if (close.kind != TokenKind::kOperator || close.op != ")") {
        return SyntaxError("expected \")\" after \"function NAME (\"", close.offset);
      }
    } else {
      lookahead_ = std::move(next);
    }
  } else if (w == "[[") {
    CORDON_TRY_VOID(SkipTestExpression(tok.offset));
  } else if (w != "!" && w != "coproc") {
    return false;
  }
  return true;
}

// "for NAME [in WORDS...]" or "for ((...))": the loop variable and its list are not commands,
// but substitutions in the list still run (the lexer parses them as it reads the words).
Result<void> Parser::SkipForHeader() {
  std::string_view text = lexer_.text();
  lexer_.PeekChar();
  std::size_t pos = lexer_.pos();
  if (text.substr(pos).starts_with("((")) {
    CORDON_TRY(std::size_t end, lexer_.ScanArithmetic(pos + 2));
    lexer_.set_pos(end);
    return {};
  }
  CORDON_TRY(Token name, NextToken());
  if (name.kind != TokenKind::kWord) return SyntaxError("\"for\" without a variable", name.offset);
  SimpleCommand header;
  header.loop_header = true;
  header.origin = origin_;
  header.words.push_back(std::move(name.word));
  bool in_list = false;
  for (;;) {
    CORDON_TRY(Token tok, NextToken());
    if (tok.kind == TokenKind::kWord) {
      if (tok.word.text == "do" && !tok.word.Has(kWordQuoted) && !in_list) {
        lookahead_ = std::move(tok);
        break;
      }
      if (!in_list && tok.word.text == "in") {
        in_list = true;
      } else {
        header.words.push_back(std::move(tok.word));
      }
      continue;
    }
    if (tok.kind == TokenKind::kNewline || (tok.kind == TokenKind::kOperator && tok.op == ";")) {
      break;
    }
    return SyntaxError("malformed for/select header", tok.offset);
  }
  out_.commands.push_back(std::move(header));
  return {};
}

Result<void> Parser::ReadCaseHeader() {
  CORDON_TRY(Token subject, NextToken());
  if (subject.kind != TokenKind::kWord)
    return SyntaxError("\"case\" without a word", subject.offset);
  for (;;) {
    CORDON_TRY(Token tok, NextToken());
    if (tok.kind == TokenKind::kNewline) continue;
    if (tok.kind == TokenKind::kWord && tok.word.text == "in") break;
    return SyntaxError("expected \"in\" after \"case WORD\"", tok.offset);
  }
  PushFrame('c');
  frames_.back().case_pattern = true;
  return {};
}

Result<void> Parser::HandleCasePattern(Token& tok) {
  switch (tok.kind) {
    case TokenKind::kNewline:
      return {};
    case TokenKind::kWord:
      if (tok.word.text == "esac" && !tok.word.Has(kWordQuoted)) frames_.pop_back();
      return {};  // a pattern word
    case TokenKind::kOperator:
      if (tok.op == "(" || tok.op == "|") return {};
      if (tok.op == ")") {
        frames_.back().case_pattern = false;
        return {};
      }
      break;
    case TokenKind::kRedirect:
    case TokenKind::kEnd:
      break;
  }
  return SyntaxError("malformed case pattern", tok.offset);
}

// [[ ... ]] is a test, not a command; "<", ">", "(", "&&" inside it are its own operators.
Result<void> Parser::SkipTestExpression(std::size_t offset) {
  for (;;) {
    CORDON_TRY(Token tok, NextToken());
    if (tok.kind == TokenKind::kEnd) return SyntaxError("\"[[\" without \"]]\"", offset);
    if (tok.kind == TokenKind::kWord && tok.word.text == "]]") return {};
  }
}

}  // namespace cordon::policy::parser_internal
