// Shells and script interpreters: which words name one, and where such a command takes its
// program from (a -c string, a script file, or standard input). The normaliser uses this to
// re-parse `sh -c TEXT`; the shell-feed rule uses it to spot `curl ... | sh`.
#pragma once

#include <string_view>
#include <vector>

#include "policy/command.h"

namespace cordon::policy {

enum class InterpreterKind {
  kNone,
  kShell,    // sh, bash, dash, zsh, ksh, ...: a -c string is shell text cordon can parse
  kScript,   // python, perl, ruby, node, php, lua: programs cordon cannot inspect
  kUnknown,  // the command word is an expansion ($SHELL, "$0"): treated as a possible shell
};

enum class ProgramFrom {
  kStdin,    // no program operand: the program is read from standard input
  kString,   // -c / -e TEXT
  kFile,     // a script file or module operand
  kMissing,  // -c without its operand
};

struct Program {
  ProgramFrom from = ProgramFrom::kStdin;
  const Word* word = nullptr;  // the string or file operand
};

// `name` is the command word's basename.
InterpreterKind ClassifyInterpreter(const Word& command_word, std::string_view name);

// Where the interpreter in argv[0] gets its program.
Program FindProgram(InterpreterKind kind, std::string_view name, const std::vector<Word>& argv);

}  // namespace cordon::policy
