// Whether sandbox-exec exists here and enforces (Apple deprecated it; a future macOS may keep
// the binary but stop enforcing). Asked once per process; a failing probe fails closed.
#pragma once

#include <filesystem>

#include "cordon/error.h"
#include "seatbelt/profile.h"

namespace cordon::seatbelt {

// Runs a profile that denies writing one file and checks that the write really failed while an
// allowed write succeeded. `scratch` is a private, canonical directory the probe may write
// into. Whether this platform has Seatbelt at all is the caller's question (session/
// backend_choice.cc); `sandbox_exec` is another path only in tests (a fake).
[[nodiscard]] Result<void> ProbeSeatbelt(const std::filesystem::path& scratch,
                                         const std::filesystem::path& sandbox_exec = kSandboxExec);

}  // namespace cordon::seatbelt
