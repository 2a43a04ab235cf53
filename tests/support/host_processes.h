// Processes on the host, found by a marker in their command line: what a run left behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace cordon::test_support {

// Host pids (this process and zombies excluded) whose command line contains `marker`.
std::vector<pid_t> PidsWithMarker(const std::string& marker);

// True when no process with `marker` remains, waiting up to `wait` for the last to go.
bool NoneWithMarker(const std::string& marker,
                    std::chrono::milliseconds wait = std::chrono::milliseconds(0));

}  // namespace cordon::test_support
