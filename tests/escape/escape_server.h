// The escape suite through the run server (CORDON_ESCAPE_SERVED=1): every sandboxed run is
// handed by `cordon run` to a `cordon serve` this test process starts (decision 0026), so the
// same attacks are judged against the served path (the server's sessions, its zygotes) as
// against a one-shot run. A sandboxed run the server did not run fails its case: the suite
// cannot silently fall back to one-shot.
#pragma once

#include <filesystem>
#include <string>

namespace cordon::escape_test {

bool ServedRuns();

// The XDG_RUNTIME_DIR of the run server for this process's runs, started at the first call in
// `dir` (its socket directory and log live there); empty with *why_not when it cannot start.
std::filesystem::path RunServerRuntime(const std::filesystem::path& dir, const std::string& cordon,
                                       std::string* why_not);

// How many commands the server has run ("ran a command" lines of its log).
int ServedCount();

// Stops the server (at the end of the test program).
void StopRunServer();

}  // namespace cordon::escape_test
