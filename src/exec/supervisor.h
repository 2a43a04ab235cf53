// The supervisor: one poll loop per run that reads the command's output, enforces its
// wall-clock timeout, waits for it, and makes sure nothing it started outlives it.
//
// Process structure it expects (see docs/supervisor.md):
//   sandboxed:   caller ── init (PID 1 of the sandbox's PID namespace) ── command ── ...
//                `process.pid` is init; init reports the command's wait status on
//                `process.status_fd` and exits, and its exit kills the whole namespace.
//   unsandboxed: caller ── command (leader of its own session and process group) ── ...
//                `process.kill_process_group`: when the leader exits, or on timeout, the
//                supervisor SIGKILLs the group.
//
// Thread-safety: no globals and no signal handlers; several threads may supervise their own
// commands at once. The caller must not reap `process.pid` itself (nor waitpid(-1) elsewhere),
// and SIGCHLD must not be set to SIG_IGN (the kernel would then reap the child before the
// supervisor can read its status).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

#include "cordon/run.h"
#include "cordon/session.h"
#include "core/unique_fd.h"
#include "exec/launched_process.h"
#include "limits/cgroup.h"

namespace cordon::exec {

struct SuperviseOptions {
  // Wall-clock limit from the start of supervision; zero or negative means none.
  std::chrono::milliseconds timeout{0};
  // Bytes kept per stream (head + tail); the rest is counted and dropped.
  std::uint64_t output_cap = 1024 * 1024;
  // false: nothing is kept (on_output gets every byte; the result has only the byte counts).
  bool capture_output = true;
  // Receives every chunk as it arrives, including bytes beyond the cap. Runs on the calling
  // thread; an exception it throws disables it for the rest of the run (the run continues).
  OutputCallback on_output;
  // Descriptors (owned by the caller) that receive stdout and stderr as they arrive, instead of
  // on_output; -1: that stream goes to on_output. Without capture_output the bytes move with
  // splice(2) where the sink takes it (exec/pass_through.h), never copied through this process.
  // A sink that fails (its reader is gone) is dropped; the stream is still read to its end.
  std::array<int, 2> sinks{-1, -1};
  // The supervisor owns the sinks: it closes each as soon as its stream has ended (or the sink
  // failed), not when the caller gets around to it, so that no process cloned from this one
  // meanwhile (a sandbox being prepared) keeps the reader from seeing EOF.
  bool own_sinks = false;
  // After the launched process is gone, how long to keep reading output still in flight from
  // processes that escaped (possible only unsandboxed). The sandboxed case reaches EOF at once.
  std::chrono::milliseconds drain_grace{250};
  // When this descriptor (owned by the caller) becomes readable, the whole tree is killed at
  // once and the run ends as kSignaled/SIGKILL with error "cancelled". Never read. -1: none.
  int cancel_fd = -1;
  // The run's cgroup (owned by the caller) when its limits needed one: everything in it is
  // killed with the tree, and its counters tell whether the memory or process limit was
  // reached (RunResult::limit, limits_reached). nullptr: no cgroup.
  limits::RunCgroup* cgroup = nullptr;
  // limits.cpu_seconds was applied (RLIMIT_CPU): a command ended by SIGXCPU ran out of it.
  bool cpu_limited = false;
};

// The supervisor's read ends of the command's stdout and stderr pipes (non-blocking). The
// caller must already have closed its copies of the write ends, or EOF never comes.
struct OutputReaders {
  core::UniqueFd stdout_read;
  core::UniqueFd stderr_read;
};

// Runs `process` to completion. Fills status, exit_code, signal, error, stdout_data,
// stderr_data, limit and limits_reached; the caller fills decision, duration and enforcement. Never
// returns while the launched process is unreaped: on any internal failure it kills the tree first.
RunResult Supervise(LaunchedProcess process, OutputReaders output, const SuperviseOptions& options);

}  // namespace cordon::exec
