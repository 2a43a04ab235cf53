// Test helpers: the argv of each simple command the parser finds, as plain strings.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "policy/normalise.h"
#include "policy/shell_parser.h"

namespace cordon::policy::testing {

using Argvs = std::vector<std::vector<std::string>>;

inline Argvs WordsOf(const Script& script) {
  Argvs out;
  for (const SimpleCommand& c : script.commands) {
    if (c.loop_header) continue;
    std::vector<std::string> argv;
    for (const Word& w : c.words) argv.push_back(w.text);
    out.push_back(argv);
  }
  return out;
}

// The parsed simple commands, or a single {"<error>", message} entry.
inline Argvs Parse(std::string_view text) {
  Result<Script> s = ParseScript(text);
  if (!s) return {{"<error>", s.error().message}};
  return WordsOf(*s);
}

// The normalised argv of every command (nested ones included).
inline Argvs Normalised(std::string_view text) {
  Result<Script> s = ParseScript(text);
  if (!s) return {{"<error>", s.error().message}};
  Analysis a = Analyse(*s, 0);
  Argvs out;
  for (const Command& c : a.commands) {
    std::vector<std::string> argv;
    for (const Word& w : c.argv) argv.push_back(w.text);
    out.push_back(argv);
  }
  return out;
}

}  // namespace cordon::policy::testing
