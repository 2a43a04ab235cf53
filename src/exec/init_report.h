// What a sandbox's init writes on its status pipe once the command ended (one write, so the
// supervisor reads it whole): the command's wait status, then — cordon-init only — how many
// processes of the command's PID namespace were still running (the tree that dies as the init
// exits), the names of the first few, and what the command left in its private tmpfs mounts.
// A plain int is the older, shorter report.
// Plain C types only: cordon-init, which fills it, has no C++ library (decision 0028).
#pragma once

namespace cordon::exec {

struct InitReport {
  int wait_status;
  int left_running;  // processes other than init still running, not zombies; -1: unknown
  char names[64];    // their names (/proc/PID/comm), NUL-separated, as many as fit
  // Bytes the command added to the sandbox's private tmpfs mounts (its scratch /tmp or TMPDIR
  // with HOME, /var/tmp, /dev/shm: the paths init was given), which vanish with it.
  unsigned long long discarded_bytes;
};

// cordon-init STATUS_FD COMMAND_PID [BASELINE PATH...]: the bytes the private tmpfs mounts held
// as the command started, then at most this many of their paths.
inline constexpr int kInitMaxPrivatePaths = 4;

}  // namespace cordon::exec
