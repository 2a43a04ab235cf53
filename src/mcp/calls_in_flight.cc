#include "mcp/calls_in_flight.h"

#include <thread>
#include <utility>

namespace cordon::mcp {

CallsInFlight::~CallsInFlight() {
  CancelAll();
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return calls_.empty(); });
}

CallsInFlight::StartStatus CallsInFlight::Start(
    const std::string& key, std::function<void(const std::shared_ptr<CancelToken>&)> work) {
  std::shared_ptr<CancelToken> token = CancelToken::Create();
  {
    std::lock_guard lock(mutex_);
    if (calls_.contains(key)) return StartStatus::kDuplicateId;
    if (calls_.size() >= max_calls_) return StartStatus::kTooMany;
    calls_.emplace(key, token);
  }
  // Detached: completion is tracked through calls_, which WaitAll and the destructor wait on.
  std::thread([this, key, token, work = std::move(work)] {
    work(token);
    Finished(key);
  }).detach();
  return StartStatus::kStarted;
}

void CallsInFlight::Finished(const std::string& key) {
  std::lock_guard lock(mutex_);
  calls_.erase(key);
  // Notified under the lock: the destructor may run as soon as a waiter sees the map empty.
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
  return idle_.wait_for(lock, limit, [this] { return calls_.empty(); });
}

std::size_t CallsInFlight::size() const {
  std::lock_guard lock(mutex_);
  return calls_.size();
}

}  // namespace cordon::mcp
