#include "exec/outside_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <system_error>
#include <vector>

namespace cordon::exec {

using core::UniqueFd;
namespace {

PortRange LocalPortRange() {
  PortRange range;
  if (std::FILE* file = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "re")) {
    PortRange read;
    if (std::fscanf(file, "%u %u", &read.low, &read.high) == 2 && read.low != 0 &&
        read.high >= read.low && read.high <= 65535) {
      range = read;
    }
    std::fclose(file);
  }
  return range;
}

// The ports the kernel never gives an unbound connect (net.ipv4.ip_local_reserved_ports, "8080,
// 9000-9010"): kept for services, so never pinned here either.
std::vector<PortRange> ReservedPorts() {
  std::vector<PortRange> reserved;
  std::FILE* file = std::fopen("/proc/sys/net/ipv4/ip_local_reserved_ports", "re");
  if (file == nullptr) return reserved;
  char text[4096] = {};
  const std::size_t n = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  const char* at = text;
  const char* const end = text + n;
  while (at < end) {
    PortRange range;
    auto [next, err] = std::from_chars(at, end, range.low);
    if (err != std::errc{}) break;
    range.high = range.low;
    if (next < end && *next == '-') {
      auto [after, high_err] = std::from_chars(next + 1, end, range.high);
      if (high_err != std::errc{}) break;
      next = after;
    }
    reserved.push_back(range);
    at = next < end && *next == ',' ? next + 1 : end;
  }
  return reserved;
}

bool Reserved(const std::vector<PortRange>& reserved, unsigned port) {
  return std::any_of(reserved.begin(), reserved.end(),
                     [&](const PortRange& r) { return port >= r.low && port <= r.high; });
}

// At most this many fresh sockets for one connect whose port's connection to the address is
// still in TIME_WAIT: each costs a socket(); a command cannot make the broker open thousands.
constexpr int kMaxFreshSockets = 64;

UniqueFd NewSocket(int domain, int options_from) {
  UniqueFd socket(::socket(domain, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
  if (!socket) return socket;
  const int one = 1;
  if (options_from >= 0) {
    CopySocketOptions(options_from, socket.get(), domain);  // v6-only before the bind
  } else {
    (void)::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  (void)::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  return socket;
}

int BindPort(int socket, int domain, std::uint16_t port) {
  sockaddr_storage local{};
  socklen_t len = sizeof(sockaddr_in);
  if (domain == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&local);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    len = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(&local);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
  }
  return ::bind(socket, reinterpret_cast<const sockaddr*>(&local), len) == 0 ? 0 : errno;
}

}  // namespace

LocalPorts ReadLocalPorts() {
  LocalPorts ports;
  ports.range = LocalPortRange();
  ports.reserved = ReservedPorts();
  return ports;
}

void CopySocketOptions(int from, int to, int domain) {
  const auto copy = [&](int level, int option) {
    int value = 0;
    socklen_t size = sizeof value;
    if (::getsockopt(from, level, option, &value, &size) == 0) {
      (void)::setsockopt(to, level, option, &value, size);
    }
  };
  copy(SOL_SOCKET, SO_KEEPALIVE);
  copy(IPPROTO_TCP, TCP_NODELAY);
  if (domain == AF_INET6) copy(IPPROTO_IPV6, IPV6_V6ONLY);
  linger l{};
  socklen_t size = sizeof l;
  if (::getsockopt(from, SOL_SOCKET, SO_LINGER, &l, &size) == 0 && l.l_onoff != 0) {
    (void)::setsockopt(to, SOL_SOCKET, SO_LINGER, &l, size);
  }
}

OutsideConnect StartOutsideConnect(const sockaddr_storage& address, int options_from,
                                   LocalPorts& ports) {
  const int domain = address.ss_family;
  const socklen_t len = domain == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const PortRange& range = ports.range;
  const unsigned count = range.high - range.low + 1;
  const unsigned start = std::uniform_int_distribution<unsigned>(0, count - 1)(ports.random);
  const std::vector<PortRange>& reserved = ports.reserved;
  UniqueFd socket;
  int fresh = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (!socket) {
      if (++fresh > kMaxFreshSockets) break;
      socket = NewSocket(domain, options_from);
      if (!socket) return {UniqueFd(), errno};
    }
    const auto port = static_cast<std::uint16_t>(range.low + (start + i) % count);
    if (Reserved(reserved, port)) continue;
    if (const int err = BindPort(socket.get(), domain, port); err != 0) {
      if (err == EADDRINUSE) continue;  // still unbound: the next port, with the same socket
      return {UniqueFd(), err};
    }
    if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), len) == 0) {
      return {std::move(socket), 0};
    }
    const int err = errno;
    if (err == EINPROGRESS) return {std::move(socket), EINPROGRESS};
    if (err != EADDRNOTAVAIL) return {UniqueFd(), err};  // the host network's own answer
    socket.Reset();  // bound to a port whose connection to `address` is in TIME_WAIT
  }
  return {UniqueFd(), EADDRNOTAVAIL};
}

}  // namespace cordon::exec
