#include "policy/shell_parser.h"

#include "policy/parser_internal.h"

namespace cordon::policy {

using parser_internal::Parser;
using parser_internal::SyntaxError;

namespace parser_internal {

Result<std::size_t> Parser::Run() {
  for (;;) {
    CORDON_TRY(Token tok, NextToken());
    if (InCasePattern() && tok.kind != TokenKind::kEnd) {
      CORDON_TRY_VOID(HandleCasePattern(tok));
      continue;
    }
    if (too_many_) {
      return Fail(ErrorCode::kUnavailable, fmt::format("more than {} simple commands or {} words",
                                                       kMaxParsedCommands, kMaxParsedWords));
    }
    switch (tok.kind) {
      case TokenKind::kEnd:
        EndCommand();
        CORDON_TRY_VOID(ReadHereDocs());
        if (until_paren_) return SyntaxError("unterminated $( or <(", tok.offset);
        if (!frames_.empty()) {
          return SyntaxError(fmt::format("\"{}\" is never closed", FrameName(frames_.back().kind)),
                             tok.offset);
        }
        if (pipe_pending_) return SyntaxError("\"|\" without a command after it", tok.offset);
        return lexer_.pos();
      case TokenKind::kNewline:
        EndCommand();
        CORDON_TRY_VOID(ReadHereDocs());
        break;
      case TokenKind::kRedirect:
        CORDON_TRY_VOID(HandleRedirect(tok));
        break;
      case TokenKind::kOperator:
        if (tok.op == ")" && frames_.empty() && until_paren_) {
          EndCommand();
          return lexer_.pos();
        }
        CORDON_TRY_VOID(HandleOperator(tok));
        break;
      case TokenKind::kWord: {
        if (AtCommandStart() && !tok.word.Has(kWordQuoted)) {
          CORDON_TRY(bool reserved, HandleReservedWord(tok));
          if (reserved) break;
        }
        StartCommand();
        current_.words.push_back(std::move(tok.word));
        if (++out_.word_count > kMaxParsedWords) too_many_ = true;
        break;
      }
    }
  }
}

Result<void> Parser::HandleOperator(const Token& tok) {
  std::string_view op = tok.op;
  if (op == ";" || op == "&" || op == "&&" || op == "||") {
    EndCommand();
    pipe_pending_ = false;
  } else if (op == "|" || op == "|&") {
    EndCommand();
    pipe_pending_ = true;
  } else if (op == "(") {
    if (started_) {
      // NAME ( ) is a function definition; the body that follows is parsed as usual.
      CORDON_TRY(Token close, NextToken());
      if (current_.words.size() != 1 || !current_.redirects.empty() ||
          close.kind != TokenKind::kOperator || close.op != ")") {
        return SyntaxError("unexpected \"(\"", tok.offset);
      }
      current_ = SimpleCommand{};
      started_ = false;
      return {};
    }
    std::size_t pos = lexer_.pos();
    if (pos < lexer_.text().size() && lexer_.text()[pos] == '(') {
      // "((" starts an arithmetic command, as in bash; it runs nothing but its substitutions.
      CORDON_TRY(std::size_t end, lexer_.ScanArithmetic(pos + 1));
      lexer_.set_pos(end);
      return {};
    }
    PushFrame('(');
  } else if (op == ")") {
    CORDON_TRY_VOID(Close('(', op, tok.offset));
  } else {  // ";;" ";&" ";;&"
    CORDON_TRY_VOID(Expect('c', op, tok.offset));
    EndCommand();
    frames_.back().case_pattern = true;
  }
  return {};
}

Result<void> Parser::HandleRedirect(const Token& tok) {
  CORDON_TRY(Token target, NextToken());
  if (target.kind != TokenKind::kWord) {
    return SyntaxError("redirection without a target", target.offset);
  }
  StartCommand();
  Redirect r;
  r.op = tok.redirect;
  r.fd = tok.fd;
  if (r.op == RedirectOp::kHereDoc) {
    pending_.push_back(PendingHereDoc{kNoCommand, current_.redirects.size(), target.word.text,
                                      tok.strip_tabs, target.word.Has(kWordQuoted)});
  }
  r.target = std::move(target.word);
  current_.redirects.push_back(std::move(r));
  return {};
}

// Here-doc bodies start on the line after the operator; they are read when that line ends.
Result<void> Parser::ReadHereDocs() {
  std::string_view text = lexer_.text();
  for (PendingHereDoc& p : pending_) {
    std::size_t pos = lexer_.pos();
    const std::size_t begin = pos;
    std::size_t body_end = text.size();
    std::string body;
    while (pos < text.size()) {
      std::size_t eol = text.find('\n', pos);
      std::size_t line_end = eol == std::string_view::npos ? text.size() : eol;
      std::string_view line = text.substr(pos, line_end - pos);
      if (p.strip_tabs) {
        while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
      }
      std::size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
      if (line == p.delimiter) {
        body_end = pos;
        pos = next;
        break;
      }
      body.append(line);
      body += '\n';
      pos = next;
    }
    if (p.command != kNoCommand) out_.commands[p.command].redirects[p.redirect].body = body;
    if (!p.quoted) CORDON_TRY_VOID(lexer_.ScanHereDoc(begin, body_end));
    lexer_.set_pos(pos);
  }
  pending_.clear();
  return {};
}

}  // namespace parser_internal

Result<Script> ParseScript(std::string_view text, int depth, Origin origin) {
  if (depth > kMaxNesting) return SyntaxError("commands nested too deeply", 0);
  Script script;
  Parser parser(text, 0, depth, origin, /*until_paren=*/false, script);
  CORDON_TRY_VOID(parser.Run());
  return script;
}

}  // namespace cordon::policy
