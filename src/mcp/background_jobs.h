// Commands an MCP session runs in the background (start_background, read_background,
// stop_background; docs/mcp.md, decision 0043). Each runs through the session's CommandRunner
// on a thread of its own, exactly as a run_command command does (command policy, sandbox,
// limits), except that its deadline is the session's end, a stop, or its own timeout. Its
// output is kept per stream until read: the newest kMaxUnreadBytes of each; older unread bytes
// are counted as dropped. Stop kills the command's whole tree through its cancel token and
// waits for it; the destructor stops every command still running.
//
// In worktree-protected sessions a running background command holds the worktree lock shared
// for its whole life, as run_command does for its run, so git_commit waits for no command
// still writing the tree (it refuses, naming them).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"
#include "mcp/cancel_token.h"
#include "mcp/command_runner.h"

namespace cordon::mcp {

class BackgroundJobs {
 public:
  static constexpr std::size_t kMaxRunning = 8;
  static constexpr std::size_t kMaxUnreadBytes = 256 * 1024;  // per stream
  static constexpr std::size_t kMaxKept = 32;  // commands remembered, ended ones included

  // A snapshot of one command, with the output read by the call that took it.
  struct Report {
    std::string id;  // "bg-1", "bg-2", ...
    std::string command;
    bool running = true;
    bool stopped = false;             // ended by stop_background or the session's end
    std::optional<RunResult> result;  // once it ended
    std::string stdout_text;          // unread output, now read
    std::string stderr_text;
    std::uint64_t dropped_bytes = 0;  // unread output dropped (oldest first) since the last read
    std::chrono::milliseconds timeout{0};
  };

  // `worktree_lock`: held shared by each running command; null when the session has none.
  BackgroundJobs(CommandRunner& runner, std::shared_mutex* worktree_lock);
  ~BackgroundJobs();  // StopAll
  BackgroundJobs(const BackgroundJobs&) = delete;
  BackgroundJobs& operator=(const BackgroundJobs&) = delete;

  // Starts `request` (capture_output is turned off: the output comes through this registry)
  // and waits up to `settle` for it to end, so a refusal, a setup failure or a quick exit
  // comes back in the answer. Fails (kUnavailable) when kMaxRunning commands are running or
  // the session is ending (StopAll ran).
  Result<Report> Start(CommandRequest request, std::string command,
                       std::chrono::milliseconds settle);
  // The command's output since the last read, after waiting up to `wait` for some to arrive
  // or for the command to end (returns early when `cancel` fires). kNotFound for an unknown id.
  Result<Report> Read(std::string_view id, std::chrono::milliseconds wait,
                      const CancelToken& cancel);
  // Kills the command's tree and waits until its run returned (the supervisor reaps it at
  // once); then the same as Read.
  Result<Report> Stop(std::string_view id);
  // The session's end: stops every command, waits for each, and starts none afterwards.
  void StopAll();

  // "bg-1 (npm run dev), bg-3 (...)": the running commands, for messages; empty when none.
  std::string RunningList() const;
  std::size_t running() const;

 private:
  struct Job {
    std::string id;
    std::string command;
    std::shared_ptr<CancelToken> cancel = CancelToken::Create();
    std::thread thread;
    std::string unread[2];  // stdout, stderr
    std::uint64_t dropped = 0;
    bool ended = false;
    bool stopped = false;
    RunResult result;
    std::chrono::milliseconds timeout{0};
  };

  void RunJob(const std::shared_ptr<Job>& job, const CommandRequest& request);  // its thread
  // With mutex_ held: the job named `id`, or null.
  std::shared_ptr<Job> Find(std::string_view id) const;
  std::size_t RunningLocked() const;
  std::string RunningListLocked() const;
  // With mutex_ held: a snapshot of `job` that takes its unread output.
  static Report TakeReport(Job& job);
  // With mutex_ held: forgets ended jobs beyond kMaxKept; their threads are handed back to be
  // joined without the lock.
  std::vector<std::thread> Prune();

  CommandRunner& runner_;
  std::shared_mutex* const worktree_lock_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  // Shared: a job's thread and a waiting reader keep it while Prune forgets it.
  std::list<std::shared_ptr<Job>> jobs_;
  std::uint64_t next_id_ = 1;
  bool closed_ = false;  // StopAll ran: nothing starts any more
};

}  // namespace cordon::mcp
