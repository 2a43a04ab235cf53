#include "net/address_class.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace cordon::net {

std::optional<IpAddress> AddressOf(const sockaddr_storage& address, unsigned len,
                                   std::uint16_t* port) {
  if (address.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    *port = ntohs(in->sin_port);
    return AddressFromBytes(reinterpret_cast<const std::uint8_t*>(&in->sin_addr), 4);
  }
  if (address.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    *port = ntohs(in6->sin6_port);
    return AddressFromBytes(in6->sin6_addr.s6_addr, 16);
  }
  return std::nullopt;
}

std::optional<IpAddress> AddressFromBytes(const std::uint8_t* data, std::size_t size) {
  IpAddress a;
  if (size == 4) {
    a.family = AF_INET;
    std::memcpy(a.bytes.data(), data, 4);
    return a;
  }
  if (size != 16) return std::nullopt;
  static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(data, kMapped, sizeof kMapped) == 0) return AddressFromBytes(data + 12, 4);
  a.family = AF_INET6;
  std::memcpy(a.bytes.data(), data, 16);
  return a;
}

std::array<std::uint8_t, 16> MappedBytes(const IpAddress& address) {
  if (address.family == AF_INET6) return address.bytes;
  std::array<std::uint8_t, 16> out{};
  out[10] = 0xff;
  out[11] = 0xff;
  std::memcpy(out.data() + 12, address.bytes.data(), 4);
  return out;
}

std::string ToString(const IpAddress& address) {
  char text[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(address.family, address.bytes.data(), text, sizeof text);
  return text;
}

std::string Bracketed(const IpAddress& address) {
  return address.family == AF_INET6 ? "[" + ToString(address) + "]" : ToString(address);
}

unsigned SockaddrOf(const IpAddress& address, std::uint16_t port, sockaddr_storage* out) {
  *out = sockaddr_storage{};
  if (address.family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    std::memcpy(in6->sin6_addr.s6_addr, address.bytes.data(), 16);
    return sizeof(sockaddr_in6);
  }
  auto* in = reinterpret_cast<sockaddr_in*>(out);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  std::memcpy(&in->sin_addr, address.bytes.data(), 4);
  return sizeof(sockaddr_in);
}

std::optional<IpAddress> ParseAddress(const std::string& text) {
  std::uint8_t bytes[16];
  if (::inet_pton(AF_INET, text.c_str(), bytes) == 1) return AddressFromBytes(bytes, 4);
  // A v4-mapped form is its IPv4 address, as everywhere else (AddressFromBytes).
  if (::inet_pton(AF_INET6, text.c_str(), bytes) == 1) return AddressFromBytes(bytes, 16);
  return std::nullopt;
}

namespace {

const char* InternalV4(const std::uint8_t* b) {
  if (b[0] == 127) return "loopback";
  if (b[0] == 0) return "unspecified";
  if (b[0] == 169 && b[1] == 254) return "link-local";
  if (b[0] == 10 || (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168)) {
    return "private";
  }
  if (b[0] == 100 && (b[1] & 0xc0) == 64) return "shared";  // 100.64.0.0/10, carrier NAT
  // 198.18.0.0/15: benchmarking, and the fake addresses of local proxies (a "fake-IP" DNS
  // mode) that stand for any host, internal ones too.
  if (b[0] == 198 && (b[1] & 0xfe) == 18) return "benchmarking";
  if (b[0] == 192 && b[1] == 0 && b[2] == 0) return "reserved";  // 192.0.0.0/24, IETF protocols
  if (b[0] >= 224) return b[0] < 240 ? "multicast" : "reserved";
  return nullptr;
}

}  // namespace

const char* InternalKind(const IpAddress& address) {
  const std::uint8_t* b = address.bytes.data();
  if (address.family == AF_INET) return InternalV4(b);
  static constexpr std::uint8_t kZero[16] = {};
  if (std::memcmp(b, kZero, 15) == 0) return b[15] == 1 ? "loopback" : "unspecified";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "site-local";  // fec0::/10, deprecated
  if ((b[0] & 0xfe) == 0xfc) return "private";  // fc00::/7, unique local (and fd00:ec2::254)
  if (b[0] == 0xff) return "multicast";
  // 64:ff9b::/96 (NAT64) and 2002::/16 (6to4) carry an IPv4 address that may be internal.
  static constexpr std::uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b};
  if (std::memcmp(b, kNat64, sizeof kNat64) == 0) return InternalV4(b + 12);
  if (b[0] == 0x20 && b[1] == 0x02) return InternalV4(b + 2);
  // 64:ff9b:1::/48: a network's own NAT64 prefix, which reaches what that network chooses.
  static constexpr std::uint8_t kLocalNat64[6] = {0, 0x64, 0xff, 0x9b, 0, 1};
  if (std::memcmp(b, kLocalNat64, sizeof kLocalNat64) == 0) return "private";
  // 2001::/32 (Teredo): a tunnel to any IPv4 address, hidden in the bits.
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) return "tunnel";
  static constexpr std::uint8_t kDiscard[8] = {0x01, 0x00};  // 100::/64, discard-only
  if (std::memcmp(b, kDiscard, sizeof kDiscard) == 0) return "reserved";
  return nullptr;
}

bool IsUnspecified(const IpAddress& address) {
  const char* kind = InternalKind(address);
  return kind != nullptr && std::strcmp(kind, "unspecified") == 0;
}

bool IsOwnHost(const IpAddress& address) {
  const std::uint8_t* b = address.bytes.data();
  if (address.family == AF_INET) return b[0] == 127 || b[0] == 0;
  static constexpr std::uint8_t kZero[16] = {};
  return std::memcmp(b, kZero, 15) == 0 && b[15] <= 1;  // :: and ::1 (v4-mapped: AF_INET)
}

std::vector<IpAddress> HostAddresses() {
  std::vector<IpAddress> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    std::uint16_t port = 0;
    sockaddr_storage copy{};
    const unsigned len =
        i->ifa_addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    if (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6) continue;
    std::memcpy(&copy, i->ifa_addr, len);
    if (std::optional<IpAddress> a = AddressOf(copy, len, &port)) out.push_back(*a);
  }
  ::freeifaddrs(list);
  return out;
}

bool IsInternal(const IpAddress& address, const std::vector<IpAddress>& host_addresses) {
  return InternalKind(address) != nullptr ||
         std::find(host_addresses.begin(), host_addresses.end(), address) != host_addresses.end();
}

}  // namespace cordon::net
