// The attack tables, one function per category (cases_*.cc). Each case is small and stands
// alone: its shell text, its setup and its outside check; see escape_harness.h for the
// placeholders and the directory tree.
#pragma once

#include <vector>

#include "escape_harness.h"

namespace cordon::escape_test {

std::vector<Case> WriteCases();
std::vector<Case> SecretCases();
std::vector<Case> EnvironmentCases();
std::vector<Case> NetworkCases();
std::vector<Case> ProcessCases();
std::vector<Case> GitCases();
std::vector<Case> HostRunCases();
std::vector<Case> PrivilegeCases();

// Every case of every category, in a stable order.
std::vector<Case> AllCases();

}  // namespace cordon::escape_test
