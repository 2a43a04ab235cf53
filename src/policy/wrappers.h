// Wrappers: commands that run another command given in their arguments (env, nice, timeout,
// xargs, ...). Stripping them, with their options, exposes the command that actually runs, so
// `env FOO=1 nice -n 5 /usr/bin/sudo x` is judged as `sudo x`. sudo and doas are deliberately
// not wrappers: they are refused themselves.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/command.h"

namespace cordon::policy {

struct Unwrapped {
  // The command that runs: leading NAME=value assignments and wrappers removed, brace
  // expansion applied to the command word. The command word keeps its path; the normaliser
  // resolves and shortens it.
  std::vector<Word> argv;
  // `command -v NAME` (and -V) only looks NAME up; NAME is not run.
  bool query_only = false;
  // Wrappers that pass their operands to `sh -c` (watch, parallel): the text that shell parses.
  std::optional<std::string> shell_text;
  // The command's arguments are read from standard input (xargs, parallel).
  bool args_from_stdin = false;
  // xargs -I STR (-i, --replace): the string each input line replaces in the command.
  std::string stdin_replace;
  // A brace expansion too large to apply: the command cannot be judged.
  bool too_complex = false;
};

Unwrapped Unwrap(std::vector<Word> words);

// The last path component: "/usr/bin/sudo" -> "sudo". A trailing slash is ignored.
std::string_view Basename(std::string_view path);

// NAME=value (also NAME+=value, NAME[i]=value) before the command word.
bool IsAssignment(const Word& word);

// Expands the first unquoted {a,b,c} group of a word the way bash does; a word without one (or
// with only a {a..b} range, which is not expanded) comes back unchanged. An expansion larger
// than kMaxBraceBytes comes back empty: {a,,,,...} with a long suffix grows quadratically.
std::vector<std::string> ExpandBraces(const std::string& text);
inline constexpr std::size_t kMaxBraceBytes = 64 * 1024;

}  // namespace cordon::policy
