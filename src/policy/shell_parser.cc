#include "policy/shell_parser.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/lexer.h"

namespace cordon::policy {
namespace {

constexpr std::size_t kNoCommand = SIZE_MAX;

std::unexpected<Error> SyntaxError(std::string what, std::size_t offset) {
  return Fail(ErrorCode::kInvalidArgument, fmt::format("{} at offset {}", what, offset));
}

// Open compound constructs: '(' subshell, '{' group, 'i' if, 'l' loop, 'c' case.
const char* FrameName(char kind) {
  switch (kind) {
    case '(':
      return "(";
    case '{':
      return "{";
    case 'i':
      return "if";
    case 'l':
      return "while/until/for";
    default:
      return "case";
  }
}

class Parser final : public NestedParser {
 public:
  Parser(std::string_view text, std::size_t pos, int depth, Origin origin, bool until_paren,
         Script& out)
      : lexer_(text, pos, *this),
        depth_(depth),
        origin_(origin),
        until_paren_(until_paren),
        out_(out) {}

  // Parses to the end of the text (or, for $( ), to its closing parenthesis) and returns the
  // position after what was parsed.
  [[nodiscard]] Result<std::size_t> Run();

  Result<std::size_t> ParseParenthesized(std::size_t pos, Origin origin,
                                         bool input_piped) override {
    if (depth_ + 1 > kMaxNesting) return SyntaxError("substitutions nested too deeply", pos);
    Parser sub(lexer_.text(), pos, depth_ + 1, origin, /*until_paren=*/true, out_);
    sub.base_piped_ = input_piped;
    return sub.Run();
  }

  Result<void> ParseText(std::string text, Origin origin) override {
    if (depth_ + 1 > kMaxNesting) return SyntaxError("substitutions nested too deeply", 0);
    Parser sub(text, 0, depth_ + 1, origin, /*until_paren=*/false, out_);
    CORDON_TRY_VOID(sub.Run());
    return {};
  }

 private:
  struct Frame {
    char kind;
    bool piped;
    bool case_pattern = false;  // in a case: reading patterns up to ")" rather than commands
  };
  struct PendingHereDoc {
    std::size_t command = kNoCommand;
    std::size_t redirect = 0;
    std::string delimiter;
    bool strip_tabs = false;
    bool quoted = false;
  };

  [[nodiscard]] Result<Token> NextToken() {
    if (lookahead_) {
      Token t = std::move(*lookahead_);
      lookahead_.reset();
      return t;
    }
    return lexer_.Next();
  }

  bool InCasePattern() const {
    return !frames_.empty() && frames_.back().kind == 'c' && frames_.back().case_pattern;
  }
  bool InPipedFrame() const {
    if (base_piped_) return true;
    for (const Frame& f : frames_) {
      if (f.piped) return true;
    }
    return false;
  }
  bool AtCommandStart() const { return !started_; }

  void StartCommand() {
    if (started_) return;
    started_ = true;
    current_.piped = pipe_pending_ || InPipedFrame();
    pipe_pending_ = false;
  }

  void EndCommand() {
    if (!started_) return;
    if (out_.commands.size() >= kMaxParsedCommands) too_many_ = true;
    current_.origin = origin_;
    out_.commands.push_back(std::move(current_));
    for (PendingHereDoc& p : pending_) {
      if (p.command == kNoCommand) p.command = out_.commands.size() - 1;
    }
    current_ = SimpleCommand{};
    started_ = false;
  }

  void PushFrame(char kind) {
    frames_.push_back(Frame{kind, pipe_pending_ || InPipedFrame()});
    pipe_pending_ = false;
  }

  [[nodiscard]] Result<void> Close(char kind, std::string_view word, std::size_t offset) {
    if (frames_.empty() || frames_.back().kind != kind) {
      return SyntaxError(fmt::format("\"{}\" without a matching opening", word), offset);
    }
    EndCommand();
    frames_.pop_back();
    return {};
  }

  [[nodiscard]] Result<void> Expect(char kind, std::string_view word, std::size_t offset) {
    if (frames_.empty() || frames_.back().kind != kind) {
      return SyntaxError(fmt::format("\"{}\" outside its construct", word), offset);
    }
    return {};
  }

  [[nodiscard]] Result<bool> HandleReservedWord(const Token& tok);
  [[nodiscard]] Result<void> SkipForHeader();
  [[nodiscard]] Result<void> ReadCaseHeader();
  [[nodiscard]] Result<void> SkipTestExpression(std::size_t offset);
  [[nodiscard]] Result<void> HandleOperator(const Token& tok);
  [[nodiscard]] Result<void> HandleCasePattern(Token& tok);
  [[nodiscard]] Result<void> HandleRedirect(const Token& tok);
  [[nodiscard]] Result<void> ReadHereDocs();

  Lexer lexer_;
  int depth_;
  Origin origin_;
  bool until_paren_;
  Script& out_;
  SimpleCommand current_;
  bool started_ = false;
  bool pipe_pending_ = false;  // the next command is fed by a pipe
  bool base_piped_ = false;
  bool too_many_ = false;  // every command here reads another command's output
  std::vector<Frame> frames_;
  std::vector<PendingHereDoc> pending_;
  std::optional<Token> lookahead_;
};

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

}  // namespace

Result<Script> ParseScript(std::string_view text, int depth, Origin origin) {
  if (depth > kMaxNesting) return SyntaxError("commands nested too deeply", 0);
  Script script;
  Parser parser(text, 0, depth, origin, /*until_paren=*/false, script);
  CORDON_TRY_VOID(parser.Run());
  return script;
}

}  // namespace cordon::policy
