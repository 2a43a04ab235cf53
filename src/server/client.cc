#include "server/client.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
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

ClientResult NotServed(std::string warning) {
  ClientResult result;
  result.warning = std::move(warning);
  return result;
}

}  // namespace

ClientResult RunThroughServer(const ServerPaths& paths, const RunRequest& request,
                              const std::vector<int>& fds) {
  // No directory, or one that is not safe: no server to use (the latter is worth a word).
  if (Result<void> dir = CheckDirectory(paths.directory, false); !dir) {
    if (dir.error().code == ErrorCode::kNotFound) return {};
    return NotServed(dir.error().message);
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = paths.socket.string();
  if (path.size() >= sizeof address.sun_path) return {};
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  core::UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) return {};
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return {};  // ENOENT, ECONNREFUSED: no server running
  }
  // The request carries the caller's environment: only to a server that is not sandboxed.
  Result<Confinement> own = OwnConfinement();
  if (!own) return NotServed(own.error().message);
  if (Result<void> trusted = CheckPeer(*own, socket.get()); !trusted) {
    return NotServed("not using the run server at " + path + ": " + trusted.error().message);
  }
  // The kernel names the sender of a message only when one of the two sockets asks for it
  // at the time of sending: ask here, so that the server's check never depends on a race.
  if (Result<void> named = PassSenderPidfd(socket.get()); !named) {
    return NotServed(named.error().message);
  }
  if (Result<void> sent = SendRequest(socket.get(), request, fds); !sent) {
    return NotServed("the run server did not take the request: " + sent.error().message);
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
  if (reply->kind == ReplyKind::kRefused) {
    std::string why = reply->stderr_text;
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return NotServed(why);
  }
  WriteAll(STDOUT_FILENO, reply->stdout_text);
  WriteAll(STDERR_FILENO, reply->stderr_text);
  ClientResult result;
  result.served = true;
  result.exit_code = reply->exit_code;
  return result;
}

}  // namespace cordon::server
