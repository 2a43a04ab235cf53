// What a sandbox's init writes on its status pipe once the command ended (one write, so the
// supervisor reads it whole): the command's wait status, then — cordon-init only — how many
// processes of the command's PID namespace were still running (the tree that dies as the init
// exits) and the names of the first few. A plain int is the older, shorter report.
// Plain C types only: cordon-init, which fills it, has no C++ library (decision 0028).
#pragma once

namespace cordon::exec {

struct InitReport {
  int wait_status;
  int left_running;  // processes other than init still running, not zombies; -1: unknown
  char names[64];    // their names (/proc/PID/comm), NUL-separated, as many as fit
};

}  // namespace cordon::exec
