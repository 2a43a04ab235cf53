// What `cordon run` prints after a command and the code it exits with, as text: the --json
// report on stdout, or cordon's own lines on stderr (denied, could not run, timed out, limits).
// One place, so that a run through the run server (src/server) prints exactly what a run in
// the `cordon run` process itself prints.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "cordon/run.h"

namespace cordon::report {

struct RunOutcome {
  int exit_code = 0;                      // RunResult::CliExitCode()
  std::string stdout_text;                // the --json report (with a final newline), else empty
  std::string stderr_text;                // cordon's messages, each line starting "cordon: "
  std::chrono::microseconds duration{0};  // RunResult::duration
};

// `timeout` is the limit the run had (for the timed-out message). `explain`: a line per denial
// of the sandbox's layers (the policy and the limits have their own lines), at most
// kMaxDenialLines and a count of the rest; `cordon run --quiet` turns them off.
inline constexpr std::size_t kMaxDenialLines = 5;
RunOutcome RenderRunOutcome(const RunResult& result, bool json, std::chrono::milliseconds timeout,
                            bool explain = true);
// The text of one denial: "connect 192.0.2.1:443 refused (network: sandbox.network: deny);
// fix: ...".
std::string DescribeDenial(const Denial& denial);

}  // namespace cordon::report
