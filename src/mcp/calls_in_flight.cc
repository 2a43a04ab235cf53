#include "mcp/calls_in_flight.h"

#include <thread>
#include <utility>

namespace cordon::mcp {

CallsInFlight::~CallsInFlight() {
  CancelAll();
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return running_ == 0; });
}

CallsInFlight::StartStatus CallsInFlight::Start(
    const std::string& key, std::function<Answer(const std::shared_ptr<CancelToken>&)> work) {
  std::shared_ptr<CancelToken> token = CancelToken::Create();
  {
    std::lock_guard lock(mutex_);
    if (calls_.contains(key)) return StartStatus::kDuplicateId;
    if (running_ >= max_calls_) return StartStatus::kTooMany;
    calls_.emplace(key, token);
    ++running_;
  }
  // Detached: completion is tracked through running_, which WaitAll and the destructor wait on.
  std::thread([this, key, token, work = std::move(work)] {
    Answer answer = work(token);
    Release(key);
    if (answer) answer();
    Finished();
  }).detach();
  return StartStatus::kStarted;
}

void CallsInFlight::Release(const std::string& key) {
  std::lock_guard lock(mutex_);
  calls_.erase(key);
}

void CallsInFlight::Finished() {
  std::lock_guard lock(mutex_);
  --running_;
  // Notified under the lock: the destructor may run as soon as a waiter sees no worker left.
  idle_.notify_all();
}

bool CallsInFlight::Cancel(const std::string& key) {
  std::lock_guard lock(mutex_);
  const auto it = calls_.find(key);
  if (it == calls_.end()) return false;
  it->second->Cancel();
  return true;
}

void CallsInFlight::CancelAll() {
  std::lock_guard lock(mutex_);
  for (auto& [key, token] : calls_) token->Cancel();
}

bool CallsInFlight::WaitAll(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, limit, [this] { return running_ == 0; });
}

std::size_t CallsInFlight::size() const {
  std::lock_guard lock(mutex_);
  return running_;
}

}  // namespace cordon::mcp
