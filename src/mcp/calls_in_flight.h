// Bookkeeping of the tools/call requests being worked on: one worker thread and one cancel
// token each, keyed by request id. The reader thread starts and cancels them; EOF cancels all
// and waits until every worker is done (each worker's command tree is dead by then).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "mcp/cancel_token.h"

namespace cordon::mcp {

class CallsInFlight {
 public:
  explicit CallsInFlight(std::size_t max_calls) : max_calls_(max_calls) {}
  ~CallsInFlight();  // waits for every worker (they reference this object)

  enum class StartStatus { kStarted, kDuplicateId, kTooMany };
  // What a call does once its key is released: sends the response (or nothing).
  using Answer = std::function<void()>;
  // Runs `work(token)` on a new thread under `key`. When work returns, the key is released
  // first and the Answer it returned runs after: a client may reuse an id as soon as it has
  // the response, so the id must be free before the response can arrive. The worker counts
  // as running (WaitAll, the limit) until its Answer has run.
  StartStatus Start(const std::string& key,
                    std::function<Answer(const std::shared_ptr<CancelToken>&)> work);

  // Fires the call's token. False when no call has that key (finished, or never existed).
  bool Cancel(const std::string& key);
  void CancelAll();
  // True when every worker finished within `limit`.
  bool WaitAll(std::chrono::milliseconds limit);
  std::size_t size() const;

 private:
  void Release(const std::string& key);
  void Finished();

  const std::size_t max_calls_;
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  std::map<std::string, std::shared_ptr<CancelToken>> calls_;  // keys still taken
  std::size_t running_ = 0;                                    // workers not yet done
};

}  // namespace cordon::mcp
