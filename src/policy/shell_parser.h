// A POSIX shell parser (with the bash extensions agents use: [[ ]], $'...', <( ), |&, &>, <<<)
// that turns command text into the simple commands it would run. It does not build a full
// syntax tree: compound commands (if, while, for, case, { }, ( ), functions) only matter for
// which words are command words, so they are tracked as a stack of open constructs, which is
// also what makes an unbalanced "fi" or ")" a parse error.
//
// Commands inside $( ), backquotes and <( ) are found recursively and added to the same list,
// marked with their Origin. Unbalanced quotes or parentheses are an Error value, never a crash.
#pragma once

#include <cstddef>
#include <string_view>

#include "cordon/error.h"
#include "policy/command.h"

namespace cordon::policy {

// Nesting of substitutions and re-parsed strings (sh -c, eval) beyond this is a parse error.
inline constexpr int kMaxNesting = 16;

// More simple commands (or words) than this is an error with code kUnavailable (not
// kInvalidArgument): the text may be valid shell, but it is too big to judge, and must be refused,
// not treated as unparsable.
inline constexpr std::size_t kMaxParsedCommands = 10000;
inline constexpr std::size_t kMaxParsedWords = 100000;

// `depth` is the nesting level of `text` itself (0 for the text cordon was given).
[[nodiscard]] Result<Script> ParseScript(std::string_view text, int depth = 0,
                                         Origin origin = Origin::kTop);

}  // namespace cordon::policy
