// The parser's class, shared by shell_parser.cc (lists, pipelines, redirections, here-docs)
// and compound_commands.cc (if/while/for/case/function/[[ ]]). Internal to src/policy.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/lexer.h"
#include "policy/shell_parser.h"

namespace cordon::policy::parser_internal {

inline constexpr std::size_t kNoCommand = SIZE_MAX;

inline std::unexpected<Error> SyntaxError(std::string what, std::size_t offset) {
  return Fail(ErrorCode::kInvalidArgument, fmt::format("{} at offset {}", what, offset));
}

// Open compound constructs: '(' subshell, '{' group, 'i' if, 'l' loop, 'c' case.
inline const char* FrameName(char kind) {
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

}  // namespace cordon::policy::parser_internal
