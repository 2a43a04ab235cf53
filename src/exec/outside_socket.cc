#include "exec/outside_socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>

namespace cordon::exec {

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

int PinLocalPort(int socket, int domain, std::mt19937& random) {
  unsigned low = 32768;
  unsigned high = 60999;
  if (std::FILE* range = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "re")) {
    if (std::fscanf(range, "%u %u", &low, &high) != 2 || low == 0 || high < low) {
      low = 32768;
      high = 60999;
    }
    std::fclose(range);
  }
  std::uniform_int_distribution<unsigned> pick(low, high);
  int err = EADDRINUSE;
  for (int attempt = 0; attempt < 16 && err == EADDRINUSE; ++attempt) {
    sockaddr_storage local{};
    socklen_t len = sizeof(sockaddr_in);
    if (domain == AF_INET6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&local);
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons(static_cast<std::uint16_t>(pick(random)));
      len = sizeof(sockaddr_in6);
    } else {
      auto* in = reinterpret_cast<sockaddr_in*>(&local);
      in->sin_family = AF_INET;
      in->sin_port = htons(static_cast<std::uint16_t>(pick(random)));
    }
    err = ::bind(socket, reinterpret_cast<const sockaddr*>(&local), len) == 0 ? 0 : errno;
  }
  return err;
}

}  // namespace cordon::exec
