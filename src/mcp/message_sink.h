// Where outgoing JSON-RPC messages go. The stdio transport writes one line per message to
// stdout; tests collect them. Send is called from the reader thread and from every worker
// thread at once, so implementations serialise.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>

namespace cordon::mcp {

class MessageSink {
 public:
  virtual ~MessageSink() = default;
  // Never throws; a message that cannot be delivered (the client went away) is dropped.
  virtual void Send(const nlohmann::json& message) = 0;
};

// Writes newline-delimited JSON to a descriptor it does not own. A write error (EPIPE: the
// client closed its end) marks the sink closed and later messages are dropped, so a vanished
// client never crashes the server (SIGPIPE must be ignored by the process; see ServeStdio).
class FdSink : public MessageSink {
 public:
  explicit FdSink(int fd) : fd_(fd) {}
  void Send(const nlohmann::json& message) override;
  bool closed() const;

 private:
  int fd_;
  mutable std::mutex mutex_;
  bool closed_ = false;
};

}  // namespace cordon::mcp
