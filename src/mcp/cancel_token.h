// A cancellation signal for one in-flight tools/call, shared between the reader thread (which
// fires it on notifications/cancelled or stdin EOF) and the worker thread running the command.
//
// Besides the flag it owns an eventfd that becomes readable when fired, so a poll loop (the
// command supervisor) can wake up at once instead of polling a flag.
#pragma once

#include <atomic>
#include <memory>

#include "core/unique_fd.h"

namespace cordon::mcp {

class CancelToken {
 public:
  // Never fails: without an eventfd (fd exhaustion) the flag still works and fd() is -1.
  static std::shared_ptr<CancelToken> Create();

  // Idempotent and thread-safe.
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Readable once Cancel() ran; -1 when no eventfd could be made. The token keeps ownership.
  int fd() const { return event_fd_.get(); }

  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

 private:
  explicit CancelToken(core::UniqueFd event_fd) : event_fd_(std::move(event_fd)) {}
  std::atomic<bool> cancelled_{false};
  core::UniqueFd event_fd_;  // Linux: an eventfd; elsewhere the read end of a pipe
#if !defined(__linux__)
  core::UniqueFd pipe_write_;  // no eventfd (macOS): Cancel writes here
#endif
};

}  // namespace cordon::mcp
