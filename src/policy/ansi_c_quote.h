// Decoding of bash's $'...' (ANSI-C) quoting, so that $'\x73udo' is seen as the word sudo.
#pragma once

#include <string>
#include <string_view>

namespace cordon::policy {

// Decodes the text between $' and the closing quote. Unknown escapes are kept as written, as
// bash does. \u and \U produce UTF-8. \c X produces the control character. A \0 (or \x00)
// ends the string, as it does in bash.
std::string DecodeAnsiC(std::string_view body);

}  // namespace cordon::policy
