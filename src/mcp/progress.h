// Streams a command's output to the client as notifications/progress while it runs, for a
// tools/call that carried params._meta.progressToken.
//
// `progress` is the number of output bytes seen so far (it only grows, as the spec requires)
// and `message` carries the output that arrived since the previous notification. At most one
// notification per interval: a command that prints a line per millisecond costs the client a
// handful of messages per second, not thousands.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>

#include "cordon/session.h"
#include "mcp/message_sink.h"

namespace cordon::mcp {

class ProgressReporter {
 public:
  using Clock = std::chrono::steady_clock;
  // Output kept for one message; beyond it the notification says how much was skipped.
  static constexpr std::size_t kMaxMessageBytes = 64 * 1024;

  // Starts a timer thread that sends output held back by the rate limit once the interval has
  // passed, so a command that prints one line and then works quietly still shows that line.
  ProgressReporter(MessageSink& sink, nlohmann::json token, std::chrono::milliseconds interval);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  // The OutputCallback body: called on the runner's thread as output arrives.
  void OnOutput(OutputStream stream, std::string_view data);
  // Sends what is still buffered and stops the timer (before the tool result is sent, so no
  // progress follows it). Nothing is sent after Finish.
  void Finish();

  OutputCallback Callback();

 private:
  void SendLocked();
  void TimerLoop();

  MessageSink& sink_;
  nlohmann::json token_;
  std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::string buffered_;
  std::uint64_t skipped_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t reported_ = 0;
  Clock::time_point last_sent_{};
  bool finished_ = false;
  std::condition_variable wake_;
  std::thread timer_;  // last member: started after everything it reads is initialised
};

}  // namespace cordon::mcp
