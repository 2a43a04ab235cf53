// Which addresses an allowed name may not lead to: each internal range next to a public
// address just outside it.
#include "net/address_class.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace cordon::net {
namespace {

IpAddress Parse(const char* text) {
  std::uint8_t bytes[16] = {};
  if (::inet_pton(AF_INET, text, bytes) == 1) return *AddressFromBytes(bytes, 4);
  EXPECT_EQ(::inet_pton(AF_INET6, text, bytes), 1) << text;
  return *AddressFromBytes(bytes, 16);
}

std::string Kind(const char* text) {
  const char* kind = InternalKind(Parse(text));
  return kind == nullptr ? "public" : kind;
}

TEST(AddressClassTest, InternalRangesAndTheirPublicNeighbours) {
  EXPECT_EQ(Kind("127.0.0.1"), "loopback");
  EXPECT_EQ(Kind("128.0.0.1"), "public");
  EXPECT_EQ(Kind("10.1.2.3"), "private");
  EXPECT_EQ(Kind("11.1.2.3"), "public");
  EXPECT_EQ(Kind("172.16.0.1"), "private");
  EXPECT_EQ(Kind("172.32.0.1"), "public");
  EXPECT_EQ(Kind("192.168.1.1"), "private");
  EXPECT_EQ(Kind("192.169.1.1"), "public");
  EXPECT_EQ(Kind("169.254.169.254"), "link-local");
  EXPECT_EQ(Kind("169.255.0.1"), "public");
  EXPECT_EQ(Kind("100.64.0.1"), "shared");
  EXPECT_EQ(Kind("100.128.0.1"), "public");
  EXPECT_EQ(Kind("0.0.0.0"), "unspecified");
  EXPECT_EQ(Kind("224.0.0.1"), "multicast");
  EXPECT_EQ(Kind("203.0.113.5"), "public");
  EXPECT_EQ(Kind("::1"), "loopback");
  EXPECT_EQ(Kind("::"), "unspecified");
  EXPECT_EQ(Kind("fe80::1"), "link-local");
  EXPECT_EQ(Kind("fd00:ec2::254"), "private");
  EXPECT_EQ(Kind("ff02::1"), "multicast");
  EXPECT_EQ(Kind("2001:db8::1"), "public");
  EXPECT_EQ(Kind("198.18.0.7"), "benchmarking");  // a fake-IP proxy's stand-in for any host
  EXPECT_EQ(Kind("198.19.255.1"), "benchmarking");
  EXPECT_EQ(Kind("198.20.0.1"), "public");
  EXPECT_EQ(Kind("192.0.0.8"), "reserved");
  EXPECT_EQ(Kind("192.0.1.8"), "public");
  EXPECT_EQ(Kind("fec0::1"), "site-local");
  EXPECT_EQ(Kind("ff00::1"), "multicast");
  EXPECT_EQ(Kind("2001:0:4136:e378::1"), "tunnel");  // Teredo
  EXPECT_EQ(Kind("2001:1::1"), "public");
  EXPECT_EQ(Kind("100::1"), "reserved");
  EXPECT_EQ(Kind("100:0:0:1::1"), "public");
}

TEST(AddressClassTest, EmbeddedIpv4IsJudgedAsIpv4) {
  EXPECT_EQ(Kind("::ffff:127.0.0.1"), "loopback");
  EXPECT_EQ(Kind("::ffff:203.0.113.5"), "public");
  EXPECT_EQ(Kind("64:ff9b::7f00:1"), "loopback");
  EXPECT_EQ(Kind("64:ff9b::cb00:7105"), "public");
  EXPECT_EQ(Kind("2002:a00:1::"), "private");
  EXPECT_EQ(Kind("2002:cb00:7105::"), "public");
  EXPECT_EQ(Kind("64:ff9b:1::a00:1"), "private");  // a network's own NAT64 prefix
  EXPECT_EQ(Kind("64:ff9b:2::a00:1"), "public");
}

TEST(AddressClassTest, MappedAddressIsTheIpv4Address) {
  EXPECT_EQ(Parse("::ffff:192.0.2.7"), Parse("192.0.2.7"));
  EXPECT_NE(Parse("2001:db8::1"), Parse("192.0.2.7"));
  EXPECT_EQ(ToString(Parse("::ffff:192.0.2.7")), "192.0.2.7");
  const std::array<std::uint8_t, 16> mapped = MappedBytes(Parse("192.0.2.7"));
  EXPECT_EQ(ToString(*AddressFromBytes(mapped.data(), 16)), "192.0.2.7");
}

TEST(AddressClassTest, AddressOfReadsPortAndRefusesShortOrOtherFamilies) {
  sockaddr_storage s{};
  auto* in = reinterpret_cast<sockaddr_in*>(&s);
  in->sin_family = AF_INET;
  in->sin_port = htons(443);
  ::inet_pton(AF_INET, "192.0.2.7", &in->sin_addr);
  std::uint16_t port = 0;
  ASSERT_TRUE(AddressOf(s, sizeof(sockaddr_in), &port));
  EXPECT_EQ(port, 443);
  EXPECT_FALSE(AddressOf(s, sizeof(sockaddr_in) - 1, &port));
  s.ss_family = AF_UNIX;
  EXPECT_FALSE(AddressOf(s, sizeof s, &port));
}

TEST(AddressClassTest, SockaddrOfIsTheReverseOfAddressOf) {
  for (const char* text : {"192.0.2.7", "2001:db8::1"}) {
    const IpAddress address = *ParseAddress(text);
    sockaddr_storage storage{};
    const unsigned len = SockaddrOf(address, 443, &storage);
    std::uint16_t port = 0;
    EXPECT_EQ(AddressOf(storage, len, &port), address) << text;
    EXPECT_EQ(port, 443) << text;
    // One byte short is no address (its twin: the length it gave).
    EXPECT_FALSE(AddressOf(storage, len - 1, &port)) << text;
  }
}

TEST(AddressClassTest, HostAddressesIncludeLoopback) {
  const std::vector<IpAddress> all = HostAddresses();
  EXPECT_NE(std::find(all.begin(), all.end(), Parse("127.0.0.1")), all.end());
}

TEST(AddressClassTest, TextRoundTripsAndBracketsOnlyIpv6) {
  for (const char* text : {"192.0.2.7", "2001:db8::1"}) {
    const std::optional<IpAddress> parsed = ParseAddress(text);
    ASSERT_TRUE(parsed) << text;
    EXPECT_EQ(ToString(*parsed), text);
  }
  EXPECT_EQ(Bracketed(*ParseAddress("192.0.2.7")), "192.0.2.7");
  EXPECT_EQ(Bracketed(*ParseAddress("2001:db8::1")), "[2001:db8::1]");
  EXPECT_EQ(ParseAddress("::ffff:192.0.2.7"), ParseAddress("192.0.2.7"));
  for (const char* bad : {"", "[2001:db8::1]", "192.0.2.7:80", "pkg.test", "fe80::1%lo"}) {
    EXPECT_FALSE(ParseAddress(bad)) << bad;
  }
}

TEST(AddressClassTest, InternalIncludesTheHostsOwnAddresses) {
  const IpAddress own = Parse("192.0.2.7");
  EXPECT_FALSE(IsInternal(own, {}));
  EXPECT_TRUE(IsInternal(own, {own}));
  EXPECT_TRUE(IsInternal(Parse("10.0.0.5"), {}));
}

}  // namespace
}  // namespace cordon::net
