// Requests the server sends to the client (elicitation/create) and the replies it waits for.
// The reader thread delivers responses; a worker thread waits for its own, with a deadline and
// its tools/call's cancel token, so a client that never answers costs one timeout, not a hang.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "mcp/cancel_token.h"
#include "mcp/json_rpc.h"

namespace cordon::mcp {

class PendingRequests {
 public:
  // A fresh id ("cordon-N": strings never collide with a client's integer ids in logs) and
  // registers it; the response is kept until Wait or Forget.
  nlohmann::json Register();
  // Called by the reader thread. False when nobody waits for that id (late or unknown reply).
  bool Deliver(Response response);
  // Waits until the response arrives, `deadline` passes, `cancel` fires or Close() is called;
  // unregisters the id in every case. nullopt unless a response arrived.
  std::optional<Response> Wait(const nlohmann::json& id,
                               std::chrono::steady_clock::time_point deadline,
                               const CancelToken& cancel);
  // Wakes every waiter (stdin reached EOF: no response can come any more).
  void Close();

 private:
  struct Slot {
    std::optional<Response> response;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Slot> slots_;
  std::uint64_t next_id_ = 1;
  bool closed_ = false;
};

}  // namespace cordon::mcp
