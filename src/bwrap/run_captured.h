// Runs bubblewrap briefly and keeps what it printed on one stream: `bwrap --version` (stdout,
// parsed by LocateBwrap) and the namespace probe of BwrapBackend::Create (stderr, the reason
// it could not build a sandbox).
#pragma once

#include <string>
#include <vector>

#include "cordon/error.h"

namespace cordon::bwrap {

enum class CapturedStream { kStdout, kStderr };

struct CapturedRun {
  bool exited_zero = false;
  std::string output;  // the captured stream's first bytes, trailing newlines kept
};

// Runs argv[0] (an absolute path; PATH is not searched) with `argv` and the environment
// `envp` ("NAME=value" entries; empty: none). stdin reads /dev/null, `stream` goes to a memfd
// of which at most `limit` bytes are kept, the other stream to /dev/null. Waits for the exit.
// An Error only when the run could not be started (memfd_create, posix_spawn).
[[nodiscard]] Result<CapturedRun> RunCaptured(const std::vector<std::string>& argv,
                                              const std::vector<std::string>& envp,
                                              CapturedStream stream, std::size_t limit);

}  // namespace cordon::bwrap
