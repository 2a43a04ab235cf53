// Spawns a command, drains its stdout, waits, and reports what the benchmarks measure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon::bench {

struct SpawnStats {
  int exit_code = -1;
  std::uint64_t stdout_bytes = 0;
  // wait4's peak resident set: at least the spawner's own, which the kernel counts for the
  // image execve replaced (startup_bench measures peaks through bench/peak_rss.cc instead).
  long max_rss_kib = 0;
};

// Runs argv with env; stdout is read and discarded, stderr goes to /dev/null.
SpawnStats SpawnAndWait(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace cordon::bench
