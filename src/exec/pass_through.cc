#include "exec/pass_through.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace cordon::exec {
namespace {

// The command's pipe holds up to 1 MiB (command_pipes.cc): ask for all of it at once.
constexpr std::size_t kSpliceMax = 1 << 20;
// How long one wait for a full non-blocking sink may hold up the supervisor's poll loop (its
// timeout and exit checks) before it looks again.
constexpr int kSinkWaitMs = 50;

}  // namespace

void PassThrough::GrowPipeSink() {
  grown_ = true;
#if defined(__linux__)
  struct stat st {};
  if (::fstat(sink_, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  const int size = ::fcntl(sink_, F_GETPIPE_SZ);
  if (size >= 0 && static_cast<std::size_t>(size) < kSpliceMax) {
    (void)::fcntl(sink_, F_SETPIPE_SZ, static_cast<int>(kSpliceMax));  // EPERM: stays as it is
  }
#endif
}

PassThrough::Outcome PassThrough::Splice(int source) {
#if defined(__linux__)
  if (!grown_) GrowPipeSink();
  // No SPLICE_F_NONBLOCK: a blocking sink (the usual stdout) holds the loop while it is full,
  // exactly as a write would; the source is only spliced after poll() found it readable.
  const ssize_t n = ::splice(source, nullptr, sink_, nullptr, kSpliceMax, SPLICE_F_MOVE);
  if (n > 0) return {Status::kMoved, static_cast<std::size_t>(n)};
  if (n == 0) return {Status::kEof};
  switch (errno) {
    case EINTR:
      return {Status::kEmpty};
    case EAGAIN:
      // The source was readable, so a non-blocking sink is full: wait for room, briefly.
      if (!AwaitWritable()) return {Status::kSinkBroken};
      return {Status::kEmpty};
    case EINVAL:  // no splice_write for this file, or O_APPEND
    case ESPIPE:
      return {Status::kUnsupported};
    default:
      return {Status::kSinkBroken};
  }
#else
  (void)source;
  return {Status::kUnsupported};
#endif
}

bool PassThrough::AwaitWritable() {
  pollfd p{sink_, POLLOUT, 0};
  const int ready = ::poll(&p, 1, kSinkWaitMs);
  if (ready < 0) return errno == EINTR;
  return (p.revents & (POLLERR | POLLNVAL)) == 0;
}

bool PassThrough::Write(std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(sink_, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!AwaitWritable()) return false;
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace cordon::exec
