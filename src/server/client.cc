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

}  // namespace

std::string RefusalWarning(std::string text) {
  text = Chomp(std::move(text));
  constexpr std::string_view kPrefix = "cordon: ";
  while (text.starts_with(kPrefix)) text.erase(0, kPrefix.size());
  return text;
}

namespace {

ClientResult NotServed(std::string warning) {
  ClientResult result;
  result.warning = std::move(warning);
  return result;
}

// The command may have started there: not run again here. Exit 125 with `message`.
ClientResult GaveUp(const std::string& message) {
  WriteAll(STDERR_FILENO, message);
  ClientResult result;
  result.served = true;
  result.exit_code = 125;
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

ClientResult RunThroughServer(const ServerPaths& paths, const Invocation& invocation) {
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
    if (trusted.error().code == ErrorCode::kNotFound) return NoneRunning();  // killed, say
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
  if (!WaitForReply(socket.get(), std::chrono::milliseconds(kHelloWaitMs))) {
    return NotServed(
        fmt::format("the run server at {} did not take the connection within {} s "
                    "(stopped?)",
                    path, kHelloWaitMs / 1000));
  }
  Result<Reply> hello = ReceiveReply(socket.get());
  if (!hello) return NotServed("the run server did not greet: " + hello.error().message);
  if (hello->kind == ReplyKind::kRefused) return NotServed(RefusalWarning(hello->stderr_text));
  if (hello->kind != ReplyKind::kHello) {
    return NotServed("the run server answered before the request (a protocol mismatch)");
  }
  // This process's directory goes as a descriptor too: the server resolves the directory this
  // process is in, not whatever its name reaches by the time the server looks.
  const core::UniqueFd here(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!here.valid()) return {};
  if (Result<void> sent = SendInvocation(socket.get(), invocation,
                                         {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO, here.get()});
      !sent) {
    return NotServed("the run server did not take the request: " + sent.error().message);
  }
  // Nothing has run before kAccepted: kRunYourself or kRefused leave the command to this
  // process.
  if (!WaitForReply(socket.get(), std::chrono::milliseconds(kAcceptWaitMs))) {
    return GaveUp(fmt::format(
        "cordon: the run server did not take the command within {} s (stopped?); giving up, "
        "which cancels it\n",
        kAcceptWaitMs / 1000));
  }
  Result<Reply> accepted = ReceiveReply(socket.get());
  if (!accepted) return NotServed("the run server vanished: " + accepted.error().message);
  if (accepted->kind == ReplyKind::kRefused)
    return NotServed(RefusalWarning(accepted->stderr_text));
  // Not for this caller's context (another cgroup, namespaces, limits: decision 0030) or not a
  // command line it runs as it stands: this process runs it; nothing ran there.
  if (accepted->kind == ReplyKind::kRunYourself) return {};
  if (accepted->kind != ReplyKind::kAccepted) {
    return GaveUp("cordon: the run server answered out of order; giving up\n");
  }
  const auto wait =
      std::chrono::seconds(accepted->wait_seconds) + std::chrono::milliseconds(kReplyGraceMs);
  if (!WaitForReply(socket.get(), wait)) {
    // The server enforces the run's timeout itself: no reply by now means it is stopped or
    // hung. This process's exit closes the socket, which cancels the command (the whole tree)
    // as soon as the server runs again.
    return GaveUp(fmt::format(
        "cordon: the run server did not answer within {} s (stopped or hung?); giving up, "
        "which cancels the command\n",
        std::chrono::duration_cast<std::chrono::seconds>(wait).count()));
  }
  Result<Reply> reply = ReceiveReply(socket.get());
  // The server may have started the command: running it again could do it twice. Report.
  if (!reply)
    return GaveUp(
        "cordon: the run server vanished during the run (killed?); the command may "
        "have run, in part or whole, and is not run again: " +
        reply.error().message + "\n");
  // It could not run it (nothing ran): this process runs it.
  if (reply->kind == ReplyKind::kRefused) return NotServed(RefusalWarning(reply->stderr_text));
  if (reply->kind != ReplyKind::kRan) {
    return GaveUp("cordon: the run server sent a second greeting instead of a result\n");
  }
  WriteAll(STDOUT_FILENO, reply->stdout_text);
  WriteAll(STDERR_FILENO, reply->stderr_text);
  ClientResult result;
  result.served = true;
  result.exit_code = reply->exit_code;
  return result;
}

}  // namespace cordon::server
