#include "mcp/progress.h"

#include <fmt/format.h>

#include <utility>

#include "mcp/json_rpc.h"

namespace cordon::mcp {

ProgressReporter::ProgressReporter(MessageSink& sink, nlohmann::json token,
                                   std::chrono::milliseconds interval)
    : sink_(sink), token_(std::move(token)), interval_(interval) {
  timer_ = std::thread([this] { TimerLoop(); });
}

ProgressReporter::~ProgressReporter() { Finish(); }

void ProgressReporter::TimerLoop() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    wake_.wait_for(lock, interval_);
    if (!finished_ && Clock::now() - last_sent_ >= interval_) SendLocked();
  }
}

void ProgressReporter::OnOutput(OutputStream /*stream*/, std::string_view data) {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  total_ += data.size();
  const std::size_t room = kMaxMessageBytes - std::min(kMaxMessageBytes, buffered_.size());
  buffered_.append(data.substr(0, room));
  if (data.size() > room) skipped_ += data.size() - room;
  if (Clock::now() - last_sent_ >= interval_) SendLocked();
}

void ProgressReporter::Finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    SendLocked();
    finished_ = true;
  }
  wake_.notify_all();
  if (timer_.joinable()) timer_.join();
}

void ProgressReporter::SendLocked() {
  if (total_ == reported_) return;  // nothing new: progress must increase
  std::string message = std::move(buffered_);
  buffered_.clear();
  if (skipped_ > 0) {
    message += fmt::format("\n[{} bytes of output not shown in progress]\n", skipped_);
    skipped_ = 0;
  }
  reported_ = total_;
  last_sent_ = Clock::now();
  sink_.Send(MakeNotification(
      "notifications/progress",
      {{"progressToken", token_}, {"progress", reported_}, {"message", std::move(message)}}));
}

OutputCallback ProgressReporter::Callback() {
  return [this](OutputStream stream, std::string_view data) { OnOutput(stream, data); };
}

}  // namespace cordon::mcp
