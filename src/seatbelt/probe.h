// Whether sandbox-exec exists here and enforces (Apple deprecated it; a future macOS may keep
// the binary but stop enforcing). Asked once per process; a failing probe fails closed.
#pragma once

#include <filesystem>
#include <string>

#include "cordon/error.h"
#include "seatbelt/profile.h"

namespace cordon::seatbelt {

// sandbox-exec's own failures, before it runs the command (observed, not documented by Apple):
// the profile did not compile (EX_DATAERR), or sandbox_apply failed, as it does inside another
// Seatbelt sandbox (EX_OSERR).
inline constexpr int kSandboxExecProfileRefused = 65;
inline constexpr int kSandboxExecApplyFailed = 71;

// Runs /usr/bin/true under `profile`: nothing when it ran, else why sandbox-exec failed
// (ExplainSandboxExecFailure), its complaint read from its stderr.
[[nodiscard]] Result<void> CheckProfileApplies(const std::filesystem::path& sandbox_exec,
                                               const SeatbeltProfile& profile);

// After a run that exited `exit_code` (65 or 71): the same profile applied to /usr/bin/true
// again. The reason when that fails alike — the same status, and sandbox-exec's own complaint
// ("sandbox-exec: ...") on stderr — so the run's status was sandbox-exec's; empty otherwise
// (the command's own status, or a re-check that failed some other way, which proves nothing).
std::string FailsAlike(const std::filesystem::path& sandbox_exec, const SeatbeltProfile& profile,
                       int exit_code);

// The message for sandbox-exec's exit `exit_code` with `stderr_text`, naming the cause and fix.
std::string ExplainSandboxExecFailure(const std::filesystem::path& sandbox_exec, int exit_code,
                                      const std::string& stderr_text);

// Compiles every variant of the profile (ProbeVariants), then runs one that denies writing one
// file and checks that the write really failed while an
// allowed write succeeded. `scratch` is a private, canonical directory the probe may write
// into. Whether this platform has Seatbelt at all is the caller's question (session/
// backend_choice.cc); `sandbox_exec` is another path only in tests (a fake).
[[nodiscard]] Result<void> ProbeSeatbelt(const std::filesystem::path& scratch,
                                         const std::filesystem::path& sandbox_exec = kSandboxExec);

}  // namespace cordon::seatbelt
