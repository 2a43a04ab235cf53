// The client side of `cordon mcp` for the suites that run commands through it as an agent
// does: the server started as a child (JSON-RPC 2.0, one message per line on its stdin and
// stdout; its stderr to a log file), initialized, then called from any number of threads, each
// call answered by id in whatever order the server replies.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cordon::test_support {

class McpClient {
 public:
  struct Options {
    std::vector<std::string> argv;  // `cordon [--config F] mcp [flags]`
    std::vector<std::string> env;   // complete environment ("NAME=value")
    std::filesystem::path cwd;
    std::filesystem::path log;  // the server's stderr (appended)
    int inherited_fd = -1;      // when >= 0, handed to the server as descriptor 9
    // Called with each notification the server sends (progress), on the thread reading it.
    std::function<void(const nlohmann::json&)> on_notification;
  };

  // Starts the server and completes `initialize`; null with *why_not when it does not answer
  // (its log then says why).
  static std::unique_ptr<McpClient> Start(const Options& options, std::string* why_not);

  // Closes the server's stdin (it cancels what still runs and exits) and reaps it.
  ~McpClient();
  McpClient(const McpClient&) = delete;
  McpClient& operator=(const McpClient&) = delete;

  pid_t pid() const { return pid_; }

  // The `result` of a request, or nullopt with *why_not (an error reply, no reply in `wait`, a
  // server that closed its output).
  std::optional<nlohmann::json> Call(const std::string& method, const nlohmann::json& params,
                                     std::chrono::milliseconds wait, std::string* why_not);

  // run_command's structuredContent for `arguments`; nullopt with *why_not when the call
  // failed or its result has none. `progress`: the output is also sent as it comes
  // (notifications/progress, to Options::on_notification).
  std::optional<nlohmann::json> RunCommand(const nlohmann::json& arguments,
                                           std::chrono::milliseconds wait, std::string* why_not,
                                           bool progress = false);

 private:
  McpClient() = default;
  bool Send(const nlohmann::json& message, std::string* why_not);

  pid_t pid_ = -1;
  int to_ = -1;    // its stdin
  int from_ = -1;  // its stdout
  std::filesystem::path log_;
  std::function<void(const nlohmann::json&)> on_notification_;
  std::mutex mutex_;                       // guards the rest; held while one caller reads for all
  std::string pending_;                    // read, not yet a whole line
  std::map<int, nlohmann::json> answers_;  // responses read for another caller
  int next_id_ = 1;
};

}  // namespace cordon::test_support
