#include "server/client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "core/unique_fd.h"
#include "server/peer.h"

namespace cordon::server {
namespace {

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string Chomp(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

ClientResult NotServed(std::string warning) {
  ClientResult result;
  result.warning = std::move(warning);
  return result;
}

ClientResult NoneRunning() {
  ClientResult result;
  result.none_running = true;
  return result;
}

// Waits until the reply can be read, at most `limit`; false when it did not come.
bool WaitForReply(int socket, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{socket, POLLIN, 0};
    const int wait = static_cast<int>(std::min<std::int64_t>(left.count(), 60'000));
    const int ready = ::poll(&p, 1, wait);
    if (ready > 0) return true;  // the reply, or EOF/an error that ReceiveReply reports
    if (ready < 0 && errno != EINTR) return true;
  }
}

}  // namespace

bool MayBeListening(const ServerPaths& paths) {
  // A directory that is not safe is worth RunThroughServer's warning.
  if (Result<void> dir = CheckDirectory(paths.directory, false); !dir) {
    return dir.error().code != ErrorCode::kNotFound;
  }
  struct stat st {};
  return !(::lstat(paths.socket.c_str(), &st) != 0 && errno == ENOENT);
}

ClientResult RunThroughServer(const ServerPaths& paths, const RunRequest& request,
                              const std::vector<int>& fds, std::chrono::milliseconds run_timeout) {
  // No directory, or one that is not safe: no server to use (the latter is worth a word).
  if (Result<void> dir = CheckDirectory(paths.directory, false); !dir) {
    if (dir.error().code == ErrorCode::kNotFound) return NoneRunning();
    return NotServed(dir.error().message);
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = paths.socket.string();
  if (path.size() >= sizeof address.sun_path) return {};
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking for the connect alone: a full backlog (a stopped or swamped server) answers
  // EAGAIN at once instead of blocking this run.
  core::UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket.valid()) return {};
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    if (errno == EAGAIN) {
      return NotServed("the run server at " + path + " accepts no connection (stopped or busy)");
    }
    if (errno == ENOENT || errno == ECONNREFUSED) return NoneRunning();
    return {};
  }
  if (::fcntl(socket.get(), F_SETFL, 0) != 0) return {};
  // The request carries the caller's environment: only to a server that is not sandboxed.
  Result<Confinement> own = OwnConfinement();
  if (!own) return NotServed(own.error().message);
  if (Result<void> trusted = CheckServer(*own, socket.get()); !trusted) {
    return NotServed("not using the run server at " + path + ": " + trusted.error().message);
  }
  // The kernel names the sender of a message only when one of the two sockets asks for it
  // at the time of sending: ask here, so that the server's check never depends on a race.
  if (Result<void> named = PassSenderPidfd(socket.get()); !named) {
    return NotServed(named.error().message);
  }
  // Nothing is handed over before the server has taken the connection (it checks this process
  // meanwhile, and acts on nothing before that): a stopped server would keep the descriptors
  // below in flight (and whoever reads this process's output waiting) for as long as it stays
  // stopped.
  if (!WaitForReply(socket.get(), kHelloWait)) {
    return NotServed(
        fmt::format("the run server at {} did not take the connection within {} s "
                    "(stopped?)",
                    path, kHelloWait.count()));
  }
  Result<Reply> hello = ReceiveReply(socket.get());
  if (!hello) return NotServed("the run server did not greet: " + hello.error().message);
  if (hello->kind == ReplyKind::kRefused) return NotServed(Chomp(hello->stderr_text));
  if (hello->kind != ReplyKind::kHello) {
    return NotServed("the run server answered before the request (a protocol mismatch)");
  }
  if (Result<void> sent = SendRequest(socket.get(), request, fds); !sent) {
    return NotServed("the run server did not take the request: " + sent.error().message);
  }
  if (!WaitForReply(socket.get(), run_timeout + kReplyGrace)) {
    // The server enforces the run's timeout itself: no reply by now means it is stopped or
    // hung. It may have started the command; this process's exit closes the socket, which
    // cancels it (the whole tree) as soon as the server runs again.
    ClientResult result;
    result.served = true;
    result.exit_code = 125;
    WriteAll(
        STDERR_FILENO,
        fmt::format(
            "cordon: the run server did not answer within {} s (stopped or hung?); "
            "giving up, which cancels the command\n",
            std::chrono::duration_cast<std::chrono::seconds>(run_timeout + kReplyGrace).count()));
    return result;
  }
  Result<Reply> reply = ReceiveReply(socket.get());
  if (!reply) {
    // The server may have started the command: running it again could do it twice. Report.
    ClientResult result;
    result.served = true;
    result.exit_code = 125;
    WriteAll(STDERR_FILENO, fmt::format("cordon: the run server vanished during the run: {}\n",
                                        reply.error().message));
    return result;
  }
  if (reply->kind == ReplyKind::kRefused) return NotServed(Chomp(reply->stderr_text));
  // Not for this caller's context (another cgroup, namespaces, limits: decision 0030): this
  // process runs it, as it would without a server; nothing ran there.
  if (reply->kind == ReplyKind::kRunYourself) return {};
  if (reply->kind != ReplyKind::kRan) {
    ClientResult result;
    result.served = true;  // the request was sent: it may have run
    result.exit_code = 125;
    WriteAll(STDERR_FILENO, "cordon: the run server sent a second greeting instead of a result\n");
    return result;
  }
  WriteAll(STDOUT_FILENO, reply->stdout_text);
  WriteAll(STDERR_FILENO, reply->stderr_text);
  ClientResult result;
  result.served = true;
  result.exit_code = reply->exit_code;
  return result;
}

}  // namespace cordon::server
