#include "exec/stdin_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <vector>

#include "core/syscall_error.h"

namespace cordon::exec {
namespace {

constexpr std::size_t kChunk = 64 * 1024;

struct Pipe {
  core::UniqueFd read;
  core::UniqueFd write;
};

Result<Pipe> MakePipe(const char* what) {
  int fds[2];
  if (::pipe(fds) != 0) return core::FailSyscall("pipe", what);
  Pipe pipe{core::UniqueFd(fds[0]), core::UniqueFd(fds[1])};
  for (const int fd : fds) {
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return core::FailSyscall("fcntl", "FD_CLOEXEC");
  }
  return pipe;
}

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// The copy: from `source` into `sink` (non-blocking) until the source ends, the sink has no
// reader any more, or `stop` becomes readable. Closes `sink` when it returns: the command reads
// EOF where the source ended.
void Copy(int source, core::UniqueFd sink, int stop) {
  // A write to a pipe without a reader raises SIGPIPE in the writing thread: EPIPE is enough.
  sigset_t pipe_signal;
  ::sigemptyset(&pipe_signal);
  ::sigaddset(&pipe_signal, SIGPIPE);
  (void)::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  std::vector<char> buffer(kChunk);
  std::size_t pending = 0;
  std::size_t offset = 0;
  while (true) {
    pollfd fds[3] = {
        {stop, POLLIN, 0},
        {sink.get(), static_cast<short>(pending > 0 ? POLLOUT : 0), 0},
        {source, POLLIN, 0},
    };
    const nfds_t count = pending > 0 ? 2 : 3;  // with data held, the source waits
    if (::poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    if ((fds[1].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return;  // no reader left
    if (pending > 0) {
      const ssize_t n = ::write(sink.get(), buffer.data() + offset, pending);
      if (n < 0 && (errno == EINTR || WouldBlock(errno))) continue;
      if (n <= 0) return;
      offset += static_cast<std::size_t>(n);
      pending -= static_cast<std::size_t>(n);
      continue;
    }
    if (fds[2].revents == 0) continue;
    const ssize_t n = ::read(source, buffer.data(), buffer.size());
    if (n < 0 && (errno == EINTR || WouldBlock(errno))) continue;
    if (n <= 0) return;  // the source's end (or an error: the command reads EOF either way)
    pending = static_cast<std::size_t>(n);
    offset = 0;
  }
}

}  // namespace

Result<StdinRelay> StdinRelay::Start(int source) {
  CORDON_TRY(Pipe data, MakePipe("stdin relay"));
  CORDON_TRY(Pipe stop, MakePipe("stdin relay stop"));
  const int flags = ::fcntl(data.write.get(), F_GETFL);
  if (flags < 0 || ::fcntl(data.write.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return core::FailSyscall("fcntl", "O_NONBLOCK (stdin relay)");
  }
  StdinRelay relay;
  relay.command_end_ = std::move(data.read);
  relay.stop_read_ = std::move(stop.read);
  relay.stop_write_ = std::move(stop.write);
  try {
    relay.thread_ = std::thread(Copy, source, std::move(data.write), relay.stop_read_.get());
  } catch (const std::system_error& e) {
    return Fail(ErrorCode::kSystem, std::string("stdin relay: thread: ") + e.what(),
                e.code().value());
  }
  return relay;
}

StdinRelay& StdinRelay::operator=(StdinRelay&& other) noexcept {
  if (this != &other) {
    Stop();
    command_end_ = std::move(other.command_end_);
    stop_read_ = std::move(other.stop_read_);
    stop_write_ = std::move(other.stop_write_);
    thread_ = std::move(other.thread_);
  }
  return *this;
}

void StdinRelay::Stop() {
  command_end_.Reset();
  if (thread_.joinable()) {
    const char byte = 0;
    (void)!::write(stop_write_.get(), &byte, 1);  // its read end is open: no SIGPIPE
    thread_.join();
  }
  stop_write_.Reset();
  stop_read_.Reset();
}

}  // namespace cordon::exec
