// Where a client of the sandbox's proxy asks to go (an HTTP CONNECT or absolute URL, a SOCKS5
// request), as it wrote it: a host name or an IP literal, and a port.
#pragma once

#include <cstdint>
#include <string>

namespace cordon::resolver {

struct ProxyTarget {
  std::string host;  // lower case, no final dot, no brackets around an IPv6 literal
  std::uint16_t port = 0;
  bool operator==(const ProxyTarget&) const = default;
};

// `host` as a ProxyTarget holds it: lower case, without brackets ("[::1]") or a final dot.
std::string CanonicalHost(std::string host);
// "pkg.test:443", "[2001:db8::1]:443": as a client writes it, and as cordon reports it.
std::string HostPort(const ProxyTarget& target);

}  // namespace cordon::resolver
