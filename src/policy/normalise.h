// Normalisation: from parsed simple commands to the commands the rules judge. Assignments and
// wrappers are stripped (wrappers.h), and text that another shell will parse again is parsed
// here too: `sh -c TEXT`, `eval ARGS`, `trap TEXT`, `alias N=TEXT`, `watch ARGS`, a here-doc
// fed to a shell, and the command run by `find -exec` or `cordon run --`. Each of those yields
// more commands in the same list.
//
// A command word that is a variable assigned earlier in the same text (x=sudo; $x ls, or a
// for-loop variable) is replaced by each value it can have, and each variant is judged.
#pragma once

#include <string>
#include <vector>

#include "policy/command.h"
#include "policy/shell_parser.h"

namespace cordon::policy {

enum class StdinSource {
  kInherited,     // whatever the whole command text was given
  kPipe,          // a previous pipeline stage
  kFile,          // < file
  kHereDoc,       // << or <<<: text that is visible to cordon
  kSubstitution,  // < <(...) or <<< "$(...)": the output of another command
};

struct Command {
  std::vector<Word> argv;  // after normalisation; argv[0] is a basename
  std::string text;        // argv joined with single spaces: what user patterns match
  std::string original;    // the simple command's words joined, before normalisation
  std::vector<Redirect> redirects;
  StdinSource stdin_source = StdinSource::kInherited;
  std::string stdin_text;  // the here-doc body or here-string for kHereDoc
  Origin origin = Origin::kTop;
  bool query_only = false;       // command -v NAME: looks NAME up without running it
  bool args_from_stdin = false;  // run by xargs/parallel: more arguments come from stdin
  std::string stdin_replace;     // xargs -I STR: where each input line goes in the arguments
  // The working directory an earlier `cd` in the same text set ("/", "/usr", "~"), when the
  // text itself says it; empty: not known (the caller's).
  std::string known_cwd;
  // The command name is another command's output ($(cmd) args, x=$(cmd); $x args), which
  // cordon cannot know; `$(which NAME)` and `$(command -v NAME)` are resolved to NAME instead.
  bool name_from_output = false;

  std::string_view name() const {
    return argv.empty() ? std::string_view() : std::string_view(argv[0].text);
  }
};

struct Analysis {
  std::vector<Command> commands;
  // Nested texts (sh -c TEXT, eval ARGS, ...) that could not be parsed; checked as raw text.
  std::vector<std::string> unparsed;
  // More than kMaxCommands commands, more than kMaxReparsedBytes of nested text, or an
  // oversized brace expansion: hostile
  // text built to make checking slow. The analysis stopped early; the text must be refused.
  bool too_complex = false;
};

// No command a person or a model writes comes near these; they bound evaluation time.
inline constexpr std::size_t kMaxCommands = 2 * kMaxParsedCommands;
inline constexpr std::size_t kMaxReparsedBytes = std::size_t{2} << 20;

// `depth` is the nesting level the script was parsed at.
Analysis Analyse(const Script& script, int depth);

}  // namespace cordon::policy
