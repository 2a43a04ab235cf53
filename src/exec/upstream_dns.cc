#include "exec/upstream_dns.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "net/domain_pattern.h"
#include "net/resolver_report.h"

namespace cordon::exec {
namespace {

void Put16(std::vector<std::uint8_t>& out, std::uint16_t value) {
  out.push_back(static_cast<std::uint8_t>(value >> 8));
  out.push_back(static_cast<std::uint8_t>(value & 0xff));
}

}  // namespace

std::vector<std::uint8_t> EncodeQuery(std::string_view name, std::uint16_t type,
                                      std::uint16_t qclass, std::uint16_t id) {
  if (!net::IsHostName(name)) return {};
  std::vector<std::uint8_t> out;
  Put16(out, id);
  Put16(out, 0x0100);  // a standard query, recursion desired
  Put16(out, 1);       // one question
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, 0);
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view label = name.substr(start, dot - start);
    out.push_back(static_cast<std::uint8_t>(label.size()));
    out.insert(out.end(), label.begin(), label.end());
    start = dot + 1;
  }
  out.push_back(0);
  Put16(out, type);
  Put16(out, qclass);
  // The EDNS record (RFC 6891): the root's OPT, the buffer size as its class, nothing else.
  out[11] = 1;  // one additional record
  out.push_back(0);
  Put16(out, 41);
  Put16(out, kEdnsBufferSize);
  out.insert(out.end(), {0, 0, 0, 0, 0, 0});
  return out;
}

sockaddr_storage UpstreamDns::HostResolver() {
  sockaddr_storage out{};
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  in->sin_family = AF_INET;
  in->sin_port = htons(53);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::ifstream file("/etc/resolv.conf");
  for (std::string line; std::getline(file, line);) {
    std::istringstream words(line);
    std::string key;
    std::string value;
    if (!(words >> key >> value) || key != "nameserver") continue;
    if (const std::size_t percent = value.find('%'); percent != std::string::npos) {
      value.resize(percent);  // a scope id: link-local resolvers are not followed
    }
    sockaddr_storage parsed{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&parsed);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&parsed);
    if (::inet_pton(AF_INET, value.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(53);
      return parsed;
    }
    if (::inet_pton(AF_INET6, value.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(53);
      return parsed;
    }
  }
  return out;
}

UpstreamDns::UpstreamDns(const sockaddr_storage& upstream) : upstream_(upstream) {
  const int family = upstream.ss_family;
  epoll_.Reset(::epoll_create1(EPOLL_CLOEXEC));
  core::UniqueFd socket(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  const socklen_t len = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = socket.get();
  if (!epoll_ || !socket) {
    problem_ = fmt::format("a socket for the host's resolver failed: {}", std::strerror(errno));
  } else if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&upstream), len) != 0) {
    problem_ = fmt::format(
        "connect to the host's resolver (the first nameserver of /etc/resolv.conf) failed: {}",
        std::strerror(errno));
  } else if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, socket.get(), &event) != 0) {
    problem_ = fmt::format("epoll_ctl for the host's resolver failed: {}", std::strerror(errno));
  } else {
    socket_ = std::move(socket);
  }
}

bool UpstreamDns::Ask(std::uint16_t tag, std::string_view name, std::uint16_t type,
                      std::uint16_t qclass) {
  if (!socket_) {
    // No upstream: nothing can answer (a network where only a parent proxy resolves names).
    if (net::IsHostName(name)) {
      answers_.Asked(name, type, HostAnswers::Clock::now());
      answers_.Unanswerable(name, type);
    }
    return false;
  }
  // A random id for each query: one the host's other processes could guess would let them
  // spoof the reply (its source is checked by the connected socket).
  std::uint16_t id = 0;
  do {
    id = static_cast<std::uint16_t>(random_());
  } while (pending_.contains(id));
  std::vector<std::uint8_t> query = EncodeQuery(name, type, qclass, id);
  if (query.empty()) return false;
  if (::send(socket_.get(), query.data(), query.size(), MSG_DONTWAIT) < 0) {
    // No route to the host's resolver: nothing can answer. Any other failure (a full buffer,
    // an ICMP error an earlier query left on the socket) teaches nothing of this name.
    if (errno == ENETUNREACH || errno == EHOSTUNREACH) {
      answers_.Asked(name, type, HostAnswers::Clock::now());
      answers_.Unanswerable(name, type);
    }
    return false;
  }
  if (pending_.size() >= kMaxPending) {
    answers_.Lost(pending_.begin()->second.name, pending_.begin()->second.type);
    pending_.erase(pending_.begin());
  }
  answers_.Asked(name, type, HostAnswers::Clock::now());
  pending_[id] = Pending{tag, std::move(query), std::string(name), type};
  return true;
}

void UpstreamDns::OnReadable(const OnReply& on_reply) {
  if (!socket_) return;
  epoll_event events[kMaxStreams + 1];
  const int n = ::epoll_wait(epoll_.get(), events, static_cast<int>(std::size(events)), 0);
  for (int i = 0; i < n; ++i) {
    const int fd = events[i].data.fd;
    if (fd == socket_.get()) {
      ReadDatagrams(on_reply);
      continue;
    }
    const auto it = streams_.find(fd);
    if (it != streams_.end() && Advance(it->second, events[i].events, on_reply)) {
      streams_.erase(it);  // closing the socket leaves the epoll set
    }
  }
}

void UpstreamDns::ReadDatagrams(const OnReply& on_reply) {
  std::uint8_t buffer[kEdnsBufferSize * 2];
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = ::recv(socket_.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0) return;  // EAGAIN: all read
    if (n < 12) continue;
    const auto id = static_cast<std::uint16_t>((buffer[0] << 8) | buffer[1]);
    const auto it = pending_.find(id);
    if (it == pending_.end()) continue;
    const Pending pending = std::move(it->second);
    pending_.erase(it);
    // Truncated (TC): the whole answer comes over TCP, if a stream can be opened.
    const bool truncated = (buffer[2] & 0x02) != 0;
    if (truncated && Retry(id, pending)) {
      answers_.Heard(pending.name,
                     std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)));
      continue;
    }
    const std::span<const std::uint8_t> reply(buffer, static_cast<std::size_t>(n));
    answers_.Replied(pending.name, pending.type, reply);
    on_reply(pending.tag, reply);
  }
}

bool UpstreamDns::Retry(std::uint16_t id, const Pending& pending) {
  if (streams_.size() >= kMaxStreams) return false;
  const int family = upstream_.ss_family;
  core::UniqueFd socket(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket) return false;
  const socklen_t len = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&upstream_), len) != 0 &&
      errno != EINPROGRESS) {
    return false;
  }
  epoll_event event{};
  event.events = EPOLLOUT | EPOLLIN;
  event.data.fd = socket.get();
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, socket.get(), &event) != 0) return false;
  Stream stream;
  stream.id = id;
  stream.tag = pending.tag;
  stream.name = pending.name;
  stream.type = pending.type;
  Put16(stream.out, static_cast<std::uint16_t>(pending.query.size()));
  stream.out.insert(stream.out.end(), pending.query.begin(), pending.query.end());
  const int fd = socket.get();
  stream.socket = std::move(socket);
  streams_.emplace(fd, std::move(stream));
  return true;
}

bool UpstreamDns::Advance(Stream& stream, std::uint32_t events, const OnReply& on_reply) {
  const auto fail = [&] {
    answers_.Lost(stream.name, stream.type);
    on_reply(stream.tag, {});
    return true;
  };
  if (stream.sent < stream.out.size() && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
    const ssize_t n = ::send(stream.socket.get(), stream.out.data() + stream.sent,
                             stream.out.size() - stream.sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN ? false : fail();
    stream.sent += static_cast<std::size_t>(n);
  }
  if ((events & (EPOLLIN | EPOLLERR | EPOLLHUP)) == 0) return false;
  std::uint8_t buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(stream.socket.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN ? false : fail();
    if (n == 0) return fail();  // closed before the whole reply came
    stream.in.insert(stream.in.end(), buffer, buffer + n);
    if (stream.in.size() < 2) continue;
    const std::size_t length = (std::size_t{stream.in[0]} << 8) | stream.in[1];
    if (stream.in.size() < 2 + length) continue;
    const std::span<const std::uint8_t> reply(stream.in.data() + 2, length);
    // Not the reply to the query sent (its id): nothing more will come on this stream.
    if (length < 12 || ((reply[0] << 8) | reply[1]) != stream.id) return fail();
    answers_.Replied(stream.name, stream.type, reply);
    on_reply(stream.tag, reply);
    return true;
  }
}

}  // namespace cordon::exec
