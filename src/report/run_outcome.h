// What `cordon run` prints after a command and the code it exits with, as text: the --json
// report on stdout, or cordon's own lines on stderr (denied, could not run, timed out, limits).
// One place, so that a run through the run server (src/server) prints exactly what a run in
// the `cordon run` process itself prints.
#pragma once

#include <chrono>
#include <string>

#include "cordon/run.h"

namespace cordon::report {

struct RunOutcome {
  int exit_code = 0;                      // RunResult::CliExitCode()
  std::string stdout_text;                // the --json report (with a final newline), else empty
  std::string stderr_text;                // cordon's messages, each line starting "cordon: "
  std::chrono::microseconds duration{0};  // RunResult::duration
};

// `timeout` is the limit the run had (for the timed-out message).
RunOutcome RenderRunOutcome(const RunResult& result, bool json, std::chrono::milliseconds timeout);

}  // namespace cordon::report
