#include "mcp/pending_requests.h"

#include <utility>

namespace cordon::mcp {

nlohmann::json PendingRequests::Register() {
  std::lock_guard lock(mutex_);
  nlohmann::json id = "cordon-" + std::to_string(next_id_++);
  slots_.emplace(IdKey(id), Slot{});
  return id;
}

bool PendingRequests::Deliver(Response response) {
  {
    std::lock_guard lock(mutex_);
    const auto it = slots_.find(IdKey(response.id));
    if (it == slots_.end() || it->second.response) return false;
    it->second.response = std::move(response);
  }
  changed_.notify_all();
  return true;
}

std::optional<Response> PendingRequests::Wait(const nlohmann::json& id,
                                              std::chrono::steady_clock::time_point deadline,
                                              const CancelToken& cancel) {
  const std::string key = IdKey(id);
  std::unique_lock lock(mutex_);
  // The cancel token has no way to notify this condition variable, so the wait wakes up
  // every 50 ms to look at it; an approval prompt is not latency-sensitive.
  constexpr auto kCancelCheck = std::chrono::milliseconds(50);
  while (true) {
    const auto it = slots_.find(key);
    if (it == slots_.end()) return std::nullopt;
    if (it->second.response) {
      std::optional<Response> out = std::move(it->second.response);
      slots_.erase(it);
      return out;
    }
    const auto now = std::chrono::steady_clock::now();
    if (closed_ || cancel.cancelled() || now >= deadline) {
      slots_.erase(it);
      return std::nullopt;
    }
    changed_.wait_until(lock, std::min(deadline, now + kCancelCheck));
  }
}

void PendingRequests::Close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

}  // namespace cordon::mcp
