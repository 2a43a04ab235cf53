// Whether the `cordon` front may hand its command line and environment to the process listening
// on the run server's socket (decision 0028): the full client's rule (server/trust_rule.h,
// decision 0026), read without a C library. The server must be of this user, no more confined
// than the front (no_new_privs, seccomp filters, PID-namespace depth, read from
// /proc/PID/status through a pidfd so that a recycled PID cannot stand in) and run the very
// executable the front would exec otherwise.
#pragma once

#include <linux/stat.h>

namespace cordon::front {

struct Confinement {
  bool known = false;
  long uid = -1;
  long no_new_privs = 0;
  long seccomp_filters = 0;
  long pid_namespace_depth = 0;
};

// Parses /proc/PID/status text (NUL-terminated): known is false when a needed line is missing.
Confinement ParseStatus(const char* status);

// Reads `status` below the open /proc/PID (or /proc/self) directory.
Confinement ReadConfinement(int proc_dir);

// The process that listens on the connected `socket` passes every check against `own` and runs
// the file `executable` (statx of the full cordon).
bool ServerIsTrusted(int socket, const Confinement& own, const struct statx& executable);

}  // namespace cordon::front
