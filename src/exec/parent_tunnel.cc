// The connect broker's connects through a parent proxy (sandbox.parent_proxy, decision 0053):
// instead of connecting to the destination from the host, it connects to the parent, asks it
// to CONNECT to the destination, reads its reply head to the last byte, and passes the tunnel
// on as it would the direct socket (put in place of the command's, or sent to the proxy).
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "core/unique_fd.h"
#include "exec/connect_broker.h"
#include "exec/outside_socket.h"
#include "net/parent_proxy.h"

namespace cordon::exec {

using core::UniqueFd;

Result<sockaddr_storage> ResolveParentProxy(const net::ParentProxy& parent) {
  sockaddr_storage address{};
  if (const std::optional<net::IpAddress> literal = net::ParseAddress(parent.host)) {
    (void)net::SockaddrOf(*literal, parent.port, &address);
    return address;
  }
  // The host's own resolution (its hosts file, its DNS), as any program using the proxy would.
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(parent.port);
  if (const int rc = ::getaddrinfo(parent.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("network by domain: the parent proxy {} ({}) cannot be resolved: "
                            "{}; fix {}, or set sandbox.parent_proxy to \"none\"",
                            parent.Address(), parent.source, ::gai_strerror(rc), parent.source));
  }
  bool taken = false;
  for (const addrinfo* a = found; a != nullptr && !taken; a = a->ai_next) {
    if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && a->ai_addrlen <= sizeof address) {
      std::memcpy(&address, a->ai_addr, a->ai_addrlen);
      taken = true;
    }
  }
  ::freeaddrinfo(found);
  if (!taken) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("network by domain: the parent proxy {} ({}) has no inet address",
                            parent.Address(), parent.source));
  }
  return address;
}

bool ConnectBroker::ViaParent(const net::IpAddress& ip, std::string_view asked_name) const {
  if (!rules_.parent) return false;
  const net::ParentProxy& parent = *rules_.parent;
  if (parent.Bypasses(asked_name, ip)) return false;
  if (!resolver_) return true;
  const std::vector<std::string>& names = resolver_->HandedOut(ip);
  return std::none_of(names.begin(), names.end(),
                      [&](const std::string& name) { return parent.Bypasses(name, ip); });
}

int ConnectBroker::ParkTunnel(Parked parked, const std::string& target, int options_from) {
  OutsideConnect started = StartOutsideConnect(parent_address_, options_from, ports_);
  if (started.err != 0 && started.err != EINPROGRESS) {
    const int err = started.err;
    parked.tunnel_target = target;
    RecordParentFailure(parked, fmt::format("could not be reached: {}", std::strerror(err)));
    return err;
  }
  // Connected at once or not, the request goes when the socket is writable (TunnelStep).
  parked.socket = std::move(started.socket);
  parked.reply_deadline = std::chrono::steady_clock::now() + kParentReplyTimeout;
  parked.address = parent_address_;
  parked.tunnel_target = target;
  return Park(std::move(parked)) ? 0 : EAGAIN;
}

int ConnectBroker::TunnelStep(Parked& parked, int err) {
  const int socket = parked.socket.get();
  if (!parked.tunnel_sent) {
    if (err != 0) {
      RecordParentFailure(parked, fmt::format("could not be reached: {}", std::strerror(err)));
      return err;
    }
    const std::optional<std::string> head = net::ConnectRequestHead(parked.tunnel_target);
    if (!head) return EINVAL;  // never: targets are a checked address or a host name
    if (::send(socket, head->data(), head->size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
        static_cast<ssize_t>(head->size())) {
      // A new connection's send buffer takes a request this small whole, or not at all.
      const int failed = errno != 0 ? errno : EIO;
      RecordParentFailure(parked, fmt::format("took no request: {}", std::strerror(failed)));
      return failed;
    }
    parked.tunnel_sent = true;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = static_cast<std::uint64_t>(socket);
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, socket, &event) != 0) return errno;
    return -1;
  }
  // Read what came without taking a byte past the head: what follows is the destination's
  // (a server that speaks first). Peeked, then taken up to the end of the head at most.
  char buffer[net::kMaxParentReplyHead];
  const std::size_t room = net::kMaxParentReplyHead - parked.tunnel_reply.size();
  const ssize_t n = ::recv(socket, buffer, room, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return -1;
  if (n <= 0) {
    const int failed = n == 0 ? ECONNRESET : errno;
    RecordParentFailure(parked, "closed the connection before it answered the CONNECT request");
    return failed;
  }
  const std::size_t before = parked.tunnel_reply.size();
  parked.tunnel_reply.append(buffer, static_cast<std::size_t>(n));
  const net::ParentReply reply = net::ReadParentReply(parked.tunnel_reply);
  std::size_t take = static_cast<std::size_t>(n);
  if (reply.state == net::ParentReply::State::kDone) take = reply.head_length - before;
  if (::recv(socket, buffer, take, MSG_DONTWAIT) != static_cast<ssize_t>(take)) return EIO;
  switch (reply.state) {
    case net::ParentReply::State::kIncomplete:
      return -1;
    case net::ParentReply::State::kMalformed:
      RecordParentFailure(parked, "did not answer the CONNECT request as an HTTP proxy does");
      return ECONNREFUSED;
    case net::ParentReply::State::kDone:
      break;
  }
  if (reply.status / 100 != 2) {
    RecordParentFailure(parked, fmt::format("answered \"{}\"", reply.status_line));
    return ECONNREFUSED;
  }
  parked.tunnel_reply.clear();
  return 0;
}

std::chrono::steady_clock::time_point ConnectBroker::NextDeadline() const {
  auto next = std::chrono::steady_clock::time_point::max();
  for (const Parked& p : parked_) next = std::min(next, p.reply_deadline);
  return next;
}

void ConnectBroker::ExpireTunnels() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (now < it->reply_deadline) {
      ++it;
      continue;
    }
    RecordParentFailure(
        *it, it->tunnel_sent
                 ? fmt::format("did not answer the CONNECT request within {} s",
                               kParentReplyTimeout.count())
                 : fmt::format("could not be reached within {} s", kParentReplyTimeout.count()));
    it = Finish(it, ETIMEDOUT);
  }
}

void ConnectBroker::RecordParentFailure(const Parked& parked, const std::string& what) {
  const net::ParentProxy& parent = *rules_.parent;
  Record({"connect", parked.tunnel_target, "network",
          fmt::format("sandbox.parent_proxy: the parent proxy {} (from {}) {}", parent.Address(),
                      parent.source, what),
          fmt::format("cordon allowed it; the parent proxy did not carry it: check the proxy "
                      "(its own rules, its address in {}), or, where the destination is "
                      "reached without it, list it in no_proxy or set sandbox.parent_proxy to "
                      "\"none\"",
                      parent.source)});
}

}  // namespace cordon::exec
