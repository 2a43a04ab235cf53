// The terminal half of ADR 0064: a person approves one command to run outside the sandbox.
#pragma once

#include <string>

namespace cordon::cli {

enum class Approval { kApproved, kDeclined, kNoTerminal };

// Shows the exact command and the justification on the controlling terminal (/dev/tty, never
// stdin/stdout, which may be pipes an agent controls) and reads one answer. Only "y" or "yes"
// approves. No terminal: kNoTerminal. Nothing is remembered: each call asks again.
Approval AskOnTerminal(const std::string& command, const std::string& justification);

}  // namespace cordon::cli
