// The MCP server's dispatcher: one parsed line in, zero or more messages out through the sink.
//
// Threading: HandleLine, HandleOversizedLine and Shutdown are called by one reader thread.
// tools/call runs on a worker thread per call (CallsInFlight), so a slow command blocks
// neither the reader nor other calls, and responses may leave out of order. Everything the
// workers share with the reader is behind a mutex or immutable after initialize.
//
// Lifecycle: before initialize only initialize and ping are served. A request that a
// notifications/cancelled names gets no response (the spec: the receiver SHOULD NOT answer).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "mcp/background_jobs.h"
#include "mcp/calls_in_flight.h"
#include "mcp/command_runner.h"
#include "mcp/json_rpc.h"
#include "mcp/lifecycle.h"
#include "mcp/message_sink.h"
#include "mcp/pending_requests.h"
#include "worktree/detect.h"

namespace cordon::mcp {

struct ServerOptions {
  std::string server_version = "0.0.0";
  std::size_t max_calls_in_flight = 16;
  std::chrono::milliseconds elicitation_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds progress_interval{100};
  // How long Shutdown waits for cancelled commands to end.
  std::chrono::milliseconds shutdown_grace{std::chrono::seconds(10)};
  // The working tree git_commit commits from the host (worktree::CommitRoot, or worktree
  // mode's linked worktree). Unset: git_commit is not offered.
  std::optional<std::filesystem::path> commit_root;
  // Whether tools/list carries outputSchema and each result structuredContent. Off by default:
  // clients such as Claude Code and Codex hand structuredContent to the model in place of the
  // text, a JSON dump many times its size (decision 0059).
  bool structured_output = false;
};

class Server {
 public:
  Server(ServerOptions options, CommandRunner& runner, MessageSink& sink);
  ~Server();  // cancels and waits for every call

  void HandleLine(std::string_view line);
  // The framer dropped a line longer than its cap.
  void HandleOversizedLine(std::size_t max_line_bytes);
  // stdin reached EOF: cancel every call, stop every background command, wake every wait,
  // wait for the workers.
  // True when every worker finished within the grace period.
  bool Shutdown();

  std::size_t calls_in_flight() const { return calls_.size(); }

 private:
  void Dispatch(const Request& request);
  void OnNotification(const Notification& notification);
  nlohmann::json Initialize(const nlohmann::json& params);
  void CallTool(const Request& request);
  void LogToClient(std::string_view level, std::string_view text);

  // The body of a tools/call worker: returns the CallToolResult.
  nlohmann::json RunCommandCall(const nlohmann::json& arguments,
                                const nlohmann::json& progress_token, const CancelToken& cancel);
  // git_commit: refused while any command (run_command or background) holds the worktree.
  nlohmann::json CommitCall(const nlohmann::json& arguments, const CancelToken& cancel);

  const ServerOptions options_;
  CommandRunner& runner_;
  MessageSink& sink_;
  const Capabilities sandbox_;

  // Set once by initialize (reader thread), read by workers afterwards.
  std::atomic<bool> initialized_{false};
  std::string protocol_version_;
  ClientFeatures client_;
  std::atomic<int> log_level_{-1};  // index into the syslog levels; -1: client did not ask

  // Worktree mode: run_command holds it shared while its command runs, git_commit exclusively
  // (or refuses), so no sandboxed command changes the worktree while git on the host reads it
  // (checked for nested repositories, then `git add -A`).
  std::shared_mutex worktree_lock_;

  PendingRequests pending_;
  // start_background's commands (background_tools.h); they hold worktree_lock_ as run_command
  // does, so they are stopped (Shutdown) before it goes.
  BackgroundJobs background_;
  CallsInFlight calls_;  // last: destroyed first, waiting for workers that use the rest
};

}  // namespace cordon::mcp
