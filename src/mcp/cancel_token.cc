#include "mcp/cancel_token.h"

#include <unistd.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#else
#include <fcntl.h>
#endif

#include <cerrno>
#include <cstdint>

namespace cordon::mcp {

std::shared_ptr<CancelToken> CancelToken::Create() {
#if defined(__linux__)
  core::UniqueFd fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  return std::shared_ptr<CancelToken>(new CancelToken(std::move(fd)));
#else
  int ends[2] = {-1, -1};
  if (::pipe(ends) != 0) return std::shared_ptr<CancelToken>(new CancelToken(core::UniqueFd()));
  for (const int end : ends) {
    (void)::fcntl(end, F_SETFD, FD_CLOEXEC);
    (void)::fcntl(end, F_SETFL, O_NONBLOCK);
  }
  auto token = std::shared_ptr<CancelToken>(new CancelToken(core::UniqueFd(ends[0])));
  token->pipe_write_ = core::UniqueFd(ends[1]);
  return token;
#endif
}

void CancelToken::Cancel() {
  if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
  if (!event_fd_.valid()) return;
  const std::uint64_t one = 1;
  // The counter stays non-zero (nobody reads it), so the fd stays readable for every poller.
#if defined(__linux__)
  const int target = event_fd_.get();
#else
  const int target = pipe_write_.get();  // the byte stays unread: the read end stays readable
#endif
  while (::write(target, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace cordon::mcp
