// Inet addresses as the network-by-domain rules see them (docs/network-domains.md): one value
// type for IPv4 and IPv6 (a v4-mapped IPv6 address is its IPv4 address), and which addresses
// an allowed name may not lead to unless the address itself is listed: the host's loopback,
// link-local (cloud metadata services), private and shared ranges, multicast, the unspecified
// address, and the host's own addresses. A name that resolves there is DNS rebinding, or a way
// to the host's own services through the allow-list.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cordon::net {

struct IpAddress {
  int family = 0;                        // AF_INET or AF_INET6
  std::array<std::uint8_t, 16> bytes{};  // AF_INET: the first 4
  bool operator==(const IpAddress&) const = default;
  auto operator<=>(const IpAddress&) const = default;
};

// The address and port of an AF_INET/AF_INET6 sockaddr (`len` bytes of it); nullopt for
// another family or a short one.
std::optional<IpAddress> AddressOf(const sockaddr_storage& address, unsigned len,
                                   std::uint16_t* port);
// The reverse: `address` and `port` as a sockaddr in `out`; its length.
unsigned SockaddrOf(const IpAddress& address, std::uint16_t port, sockaddr_storage* out);
// From 4 or 16 raw bytes (an A or AAAA record's data); nullopt for another size.
std::optional<IpAddress> AddressFromBytes(const std::uint8_t* data, std::size_t size);
// The IPv6 form (an IPv4 address v4-mapped), as DomainPattern holds addresses.
std::array<std::uint8_t, 16> MappedBytes(const IpAddress& address);
// "192.0.2.7", "2001:db8::1".
std::string ToString(const IpAddress& address);
// As a domain pattern writes it: "192.0.2.7", "[2001:db8::1]" (a port may follow).
std::string Bracketed(const IpAddress& address);
// The reverse of ToString (no brackets, no scope, no port); nullopt for anything else.
std::optional<IpAddress> ParseAddress(const std::string& text);

// Why `address` is not a public destination ("loopback", "link-local", "site-local",
// "private", "shared", "benchmarking", "multicast", "unspecified", "tunnel", "reserved"), or
// nullptr when it is one.
const char* InternalKind(const IpAddress& address);

// 0.0.0.0 or :: (and the rest of 0.0.0.0/8): a connect there reaches this host itself.
bool IsUnspecified(const IpAddress& address);

// The loopback or the unspecified address: a connect there stays in the connecting process's
// own network namespace (the sandbox's, for the command).
bool IsOwnHost(const IpAddress& address);

// The addresses of this process's network namespace's interfaces (getifaddrs); empty when
// they cannot be read.
std::vector<IpAddress> HostAddresses();

// Internal (InternalKind) or one of `host_addresses`: an address an allowed name may lead to
// only when the address is listed itself.
bool IsInternal(const IpAddress& address, const std::vector<IpAddress>& host_addresses);

}  // namespace cordon::net
