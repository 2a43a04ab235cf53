// Whether sandbox-exec exists here and enforces (Apple deprecated it; a future macOS may keep
// the binary but stop enforcing). Asked once per process; a failing probe fails closed.
#pragma once

#include <filesystem>

#include "cordon/error.h"

namespace cordon::seatbelt {

// Runs a profile that denies writing one file and checks that the write really failed while an
// allowed write succeeded. `scratch` is a private directory the probe may write into.
// On anything but macOS: kUnavailable ("Seatbelt exists only on macOS").
[[nodiscard]] Result<void> ProbeSeatbelt(const std::filesystem::path& scratch);

}  // namespace cordon::seatbelt
