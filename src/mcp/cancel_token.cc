#include "mcp/cancel_token.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace cordon::mcp {

std::shared_ptr<CancelToken> CancelToken::Create() {
  core::UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  return std::shared_ptr<CancelToken>(new CancelToken(std::move(fd)));
}

void CancelToken::Cancel() {
  if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
  if (!event_fd_.valid()) return;
  const std::uint64_t one = 1;
  // The counter stays non-zero (nobody reads it), so the fd stays readable for every poller.
  while (::write(event_fd_.get(), &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace cordon::mcp
