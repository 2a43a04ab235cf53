#include "resolver/stream_clients.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace cordon::resolver {
namespace {

constexpr std::size_t kDnsHeader = 12;

}  // namespace

StreamClients::StreamClients(core::UniqueFd listener) : listener_(std::move(listener)) {
  if (!listener_) return;
  const int flags = ::fcntl(listener_.get(), F_GETFL);
  if (flags >= 0) (void)::fcntl(listener_.get(), F_SETFL, flags | O_NONBLOCK);
}

void StreamClients::AppendPollSet(std::vector<pollfd>& out) {
  if (!listener_) return;
  std::erase_if(connections_, [](const auto& entry) { return entry.second.done; });
  out.push_back({listener_.get(), POLLIN, 0});
  for (const auto& [fd, connection] : connections_) {
    out.push_back({fd, static_cast<short>(POLLIN | (connection.out.empty() ? 0 : POLLOUT)), 0});
  }
}

void StreamClients::OnReady(int fd, short revents, const OnMessage& on_message) {
  if (listener_ && fd == listener_.get()) return Accept();
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return;
  Connection& connection = it->second;
  if (connection.done) return;
  if ((revents & POLLOUT) != 0 && !Flush(connection)) connection.done = true;
  if (!connection.done && (revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
      !Read(connection, on_message)) {
    connection.done = true;
  }
}

void StreamClients::Accept() {
  for (;;) {
    core::UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;  // EAGAIN: all taken
    if (connections_.size() >= kMaxConnections) {
      const auto oldest = std::min_element(
          connections_.begin(), connections_.end(),
          [](const auto& a, const auto& b) { return a.second.serial < b.second.serial; });
      connections_.erase(oldest);
    }
    const int key = fd.get();
    connections_[key] = Connection{std::move(fd), next_serial_++, {}, {}, false};
  }
}

bool StreamClients::Read(Connection& connection, const OnMessage& on_message) {
  std::uint8_t buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(connection.fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    connection.in.insert(connection.in.end(), buffer, buffer + n);
    // Every whole message read so far; its length first.
    while (connection.in.size() >= 2) {
      const std::size_t length = (std::size_t{connection.in[0]} << 8) | connection.in[1];
      if (length < kDnsHeader) return false;
      if (connection.in.size() < 2 + length) break;
      const std::vector<std::uint8_t> message(
          connection.in.begin() + 2, connection.in.begin() + 2 + static_cast<long>(length));
      connection.in.erase(connection.in.begin(),
                          connection.in.begin() + 2 + static_cast<long>(length));
      on_message(message, Ref{connection.fd.get(), connection.serial});
    }
  }
}

void StreamClients::Send(Ref to, std::span<const std::uint8_t> message) {
  const auto it = connections_.find(to.fd);
  if (it == connections_.end() || it->second.serial != to.serial || it->second.done ||
      message.size() > 0xffff) {
    return;
  }
  Connection& connection = it->second;
  if (connection.out.size() + 2 + message.size() > kMaxQueued) {
    connection.done = true;  // it takes nothing: let it go
    return;
  }
  connection.out.push_back(static_cast<std::uint8_t>(message.size() >> 8));
  connection.out.push_back(static_cast<std::uint8_t>(message.size() & 0xff));
  connection.out.insert(connection.out.end(), message.begin(), message.end());
  if (!Flush(connection)) connection.done = true;
}

bool StreamClients::Flush(Connection& connection) {
  while (!connection.out.empty()) {
    const ssize_t n = ::send(connection.fd.get(), connection.out.data(), connection.out.size(),
                             MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    connection.out.erase(connection.out.begin(), connection.out.begin() + n);
  }
  return true;
}

}  // namespace cordon::resolver
