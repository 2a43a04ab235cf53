// POSIX quoting of an argument vector, to turn an argv request into the command text the
// policy judges (and a shell would run as exactly that argv).
#pragma once

#include <string>
#include <vector>

namespace cordon::policy {

// Words made only of safe characters are written as they are; every other word is wrapped in
// single quotes, with each ' written as '\''. The empty word becomes ''. A first word that a
// shell would read as a reserved word or an assignment (if, {, X=1) is quoted too.
std::string ShellQuote(const std::vector<std::string>& argv);

}  // namespace cordon::policy
