// Test doubles for the MCP server: a CommandRunner whose behaviour is chosen by the command
// text, and a MessageSink that records messages and lets a test wait for one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mcp/command_runner.h"
#include "mcp/message_sink.h"

namespace cordon::mcp::testing {

// Commands the fake understands:
//   "sudo ..."        denied by policy (rule default.sudo)
//   "block"           waits until Release() (or cancellation), then exits 0
//   "wait-cancel"     waits until its cancel token fires, then ends as killed by SIGKILL
//   "print N"         emits N chunks of output through the callback, 30 ms apart
//   "print-then-block" emits "first\n" and "second\n" at once, then waits like "block"
//   "fail"            exits 3 with stderr "boom"
//   anything else     exits 0 with stdout "ran: <command>\n" (through the callback only when
//                     the request does not capture output, as a Session)
class FakeRunner : public CommandRunner {
 public:
  FakeRunner();
  ~FakeRunner() override;

  RunResult Run(const CommandRequest& request, bool outside_sandbox, const CancelToken& cancel,
                const OutputCallback& on_output) override;
  Capabilities GetCapabilities() const override;
  const std::filesystem::path& Workspace() const override { return workspace_; }
  std::chrono::milliseconds MaxTimeout() const override { return std::chrono::seconds(60); }
  bool AllowsOutsideSandbox() const override { return allow_outside_; }

  void Release();
  void set_allow_outside(bool allow) { allow_outside_ = allow; }

  struct Call {
    CommandRequest request;
    bool outside_sandbox = false;
    bool saw_cancel = false;
  };
  std::vector<Call> calls() const;
  // Waits until `n` calls have started.
  bool WaitForCalls(std::size_t n, std::chrono::milliseconds limit);

 private:
  std::filesystem::path workspace_;
  bool allow_outside_ = true;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool released_ = false;
  std::vector<Call> calls_;
};

class RecordingSink : public MessageSink {
 public:
  void Send(const nlohmann::json& message) override;
  std::vector<nlohmann::json> messages() const;
  void Clear();
  // Waits for a message matching `match`; returns it, or null after `limit`.
  nlohmann::json WaitFor(const std::function<bool(const nlohmann::json&)>& match,
                         std::chrono::milliseconds limit = std::chrono::seconds(5));
  nlohmann::json WaitForResponse(const nlohmann::json& id,
                                 std::chrono::milliseconds limit = std::chrono::seconds(5));

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<nlohmann::json> messages_;
};

}  // namespace cordon::mcp::testing
