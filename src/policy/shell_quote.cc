#include "policy/shell_quote.h"

#include <array>
#include <string_view>

namespace cordon::policy {
namespace {

constexpr std::array<std::string_view, 17> kReservedWords = {
    "if",    "then",  "else", "elif", "fi",       "do",     "done",   "case", "esac",
    "while", "until", "for",  "in",   "function", "select", "coproc", "time"};

bool IsSafe(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
}

bool NeedsQuotes(std::string_view word, bool first) {
  if (word.empty()) return true;
  for (char c : word) {
    if (!IsSafe(c)) return true;
  }
  if (!first) return false;
  if (word.find('=') != std::string_view::npos) return true;
  for (std::string_view r : kReservedWords) {
    if (word == r) return true;
  }
  return false;
}

}  // namespace

std::string ShellQuote(const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (i > 0) out += ' ';
    const std::string& word = argv[i];
    if (!NeedsQuotes(word, i == 0)) {
      out += word;
      continue;
    }
    out += '\'';
    for (char c : word) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace cordon::policy
