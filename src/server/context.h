// The execution context a served command inherits from the run server instead of from the
// `cordon run` that asked for it: namespaces, root directory, credentials, umask, CPU and
// memory-node affinity, cgroup, resource limits, LSM label, seccomp and no_new_privs state,
// and scheduling. The server runs a command only
// for a caller whose context is its own (decision 0030): a caller in another cgroup, with lower
// limits, fewer groups or another network namespace would otherwise have its command escape
// them. Read from /proc/PID (the status text the trust check has read already, plus ns/*, root,
// cgroup, limits and attr/current).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace cordon::server {

struct FileId {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const FileId&) const = default;
};

// The namespaces compared, as named under /proc/PID/ns.
inline constexpr std::array<const char*, 8> kContextNamespaces = {
    "mnt", "net", "user", "ipc", "uts", "cgroup", "pid_for_children", "time_for_children"};

struct Context {
  bool known = false;  // false: /proc would not say (another user, not dumpable, no /proc)
  FileId root;         // stat of /proc/PID/root
  std::array<FileId, kContextNamespaces.size()> namespaces;
  std::string credentials;  // the Uid, Gid, Groups and Cap* lines of /proc/PID/status
  // Its NoNewPrivs, Seccomp, Seccomp_filters and Speculation* lines: the same filters are not
  // provable (nor is a Landlock domain: /proc shows none), the same number of them is required.
  std::string restrictions;
  // Nice value, scheduling policy and real-time priority (/proc/PID/stat), I/O priority
  // (ioprio_get) and oom_score_adj.
  std::string scheduling;
  std::string umask;     // its Umask line
  std::string affinity;  // its Cpus_allowed_list and Mems_allowed_list lines
  std::string cgroup;    // /proc/PID/cgroup
  std::string limits;    // /proc/PID/limits
  std::string lsm;       // /proc/PID/attr/current, or why it could not be read
};

// The value of the "name:" line of a /proc/PID/status text (empty when absent).
std::string_view StatusField(std::string_view status, std::string_view name);

// The context of process `pid`, whose /proc directory is `proc_dir` and whose status text is
// `status`. known = false when a part of it cannot be read.
Context ReadContext(int pid, int proc_dir, std::string_view status);

// Empty when a command run in `own` context runs as it would in `other`'s; else the first
// difference, worded as "it runs in another network namespace".
std::string ContextMismatch(const Context& own, const Context& other);

}  // namespace cordon::server
