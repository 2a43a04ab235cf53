// A command-line parse error in cordon's own words. CLI11 says "The following argument was not
// expected: --bogus", "A subcommand is required" or "--timeout: 1 required SECONDS missing";
// cordon says which option is unknown, what is missing and where the usage is, after one
// "cordon:" prefix (app.cc prints it).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace cordon::cli {

// The message for `error`, raised while parsing the command line of `subcommand` (empty: the
// top level), without the "cordon: " prefix and with a last line naming the help to read.
// `first_word`: the command line's first argument that is not an option, when it names no
// subcommand (`cordon bogus`): named as the unknown subcommand.
std::string DescribeParseError(const CLI::ParseError& error, std::string_view subcommand,
                               std::string_view first_word = {});

}  // namespace cordon::cli
