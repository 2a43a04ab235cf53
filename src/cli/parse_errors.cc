#include "cli/parse_errors.h"

#include <fmt/format.h>

#include <sstream>
#include <vector>

namespace cordon::cli {
namespace {

// CLI11's words after its last ": " (the arguments, or what is missing); empty when none.
std::string AfterColon(std::string_view text) {
  const std::size_t colon = text.rfind(": ");
  return colon == std::string_view::npos ? std::string() : std::string(text.substr(colon + 2));
}

std::vector<std::string> Words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string Unexpected(const std::string& what) {
  const std::vector<std::string> words = Words(AfterColon(what));
  if (words.empty()) return "an argument it does not take";
  // The first option among them is the likely mistake (a value after it is taken as an
  // argument of its own); else the first argument.
  for (const std::string& w : words) {
    if (w.size() > 1 && w[0] == '-') return fmt::format("unknown option {}", w);
  }
  return fmt::format("unexpected argument \"{}\"", words.front());
}

std::string Missing(const std::string& what) {
  // "--timeout: 1 required SECONDS missing"
  const std::size_t colon = what.find(": ");
  if (colon != std::string::npos) {
    const std::vector<std::string> words = Words(what.substr(colon + 2));
    if (words.size() == 4 && words[1] == "required" && words[3] == "missing") {
      return fmt::format("{} needs a value ({})", what.substr(0, colon), words[2]);
    }
  }
  return what;
}

std::string Required(const std::string& what, std::string_view subcommand,
                     std::string_view first_word) {
  // A subcommand's own subcommand (`cordon hook`): its --help, named below, lists them.
  if (what == "A subcommand is required" && !subcommand.empty()) return "a subcommand is required";
  if (what == "A subcommand is required") {
    constexpr std::string_view kSome = "run, check, status, sandbox, doctor, serve, mcp, ...";
    if (!first_word.empty())
      return fmt::format("unknown subcommand \"{}\" ({})", first_word, kSome);
    return fmt::format("a subcommand is required ({})", kSome);
  }
  return what;  // "command is required": CLI11 names it
}

}  // namespace

std::string DescribeParseError(const CLI::ParseError& error, std::string_view subcommand,
                               std::string_view first_word) {
  const std::string what = error.what();
  std::string message;
  // By type: an error's name is not always its class's (a subcommand's ExtrasError bears the
  // subcommand's name).
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    message = Unexpected(what);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    message = Missing(what);
  } else if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    message = Required(what, subcommand, subcommand.empty() ? first_word : std::string_view());
  } else {
    message = what;  // the validators' own words (option_values.h), or CLI11's
  }
  const std::string help =
      subcommand.empty() ? "cordon --help" : fmt::format("cordon {} --help", subcommand);
  const std::string where = subcommand.empty() ? "" : fmt::format("{}: ", subcommand);
  return fmt::format("{}{}\nSee `{}` for usage.", where, message, help);
}

}  // namespace cordon::cli
