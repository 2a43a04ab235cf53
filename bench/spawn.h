// Spawns a command, drains its stdout, waits, and reports what the benchmarks measure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::bench {

struct SpawnStats {
  int exit_code = -1;
  std::uint64_t stdout_bytes = 0;
  long max_rss_kib = 0;  // peak resident set of the spawned process itself (wait4)
};

// Runs argv with env; stdout is read and discarded, stderr goes to /dev/null.
SpawnStats SpawnAndWait(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace cordon::bench
