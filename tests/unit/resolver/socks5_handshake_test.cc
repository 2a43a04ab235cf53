// The SOCKS5 handshake of a client of the sandbox's proxy: the greeting with "no
// authentication" and one CONNECT are served, read from the connection's first bytes however
// they are split; every other method, command or address gets a failure reply.
#include "resolver/socks5_handshake.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace cordon::resolver {
namespace {

using State = Socks5Handshake::State;
using Bytes = std::vector<std::uint8_t>;

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const Bytes& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// VER NMETHODS METHODS: "no authentication" only.
Bytes Greeting() { return {5, 1, 0}; }

// A CONNECT to the domain name `host`, port `port`.
Bytes ConnectToName(const std::string& host, std::uint16_t port) {
  Bytes request = {5, 1, 0, 3, static_cast<std::uint8_t>(host.size())};
  request.insert(request.end(), host.begin(), host.end());
  request.push_back(static_cast<std::uint8_t>(port >> 8));
  request.push_back(static_cast<std::uint8_t>(port & 0xff));
  return request;
}

TEST(Socks5HandshakeTest, GreetingOfferingNoAuthenticationIsAnsweredWithIt) {
  for (const Bytes& greeting : {Greeting(), Bytes{5, 3, 2, 1, 0}}) {
    Socks5Handshake handshake;
    Bytes reply;
    EXPECT_EQ(handshake.Read(greeting, reply), State::kRequest);
    EXPECT_EQ(reply, (Bytes{5, 0}));
    EXPECT_EQ(handshake.consumed(), greeting.size());
  }
}

TEST(Socks5HandshakeTest, GreetingWithoutNoAuthenticationIsRefused) {
  for (const Bytes& greeting : {Bytes{5, 1, 2}, Bytes{5, 0}}) {
    Socks5Handshake handshake;
    Bytes reply;
    EXPECT_EQ(handshake.Read(greeting, reply), State::kFailed);
    EXPECT_EQ(reply, (Bytes{5, 0xff}));
  }
}

TEST(Socks5HandshakeTest, OtherVersionsFailWithoutReply) {
  // SOCKS4's CONNECT, and an HTTP request.
  for (const Bytes& bytes : {Bytes{4, 1, 0, 80, 198, 51, 100, 10, 0}, Bytes{'G', 'E', 'T', ' '}}) {
    Socks5Handshake handshake;
    Bytes reply;
    EXPECT_EQ(handshake.Read(bytes, reply), State::kFailed);
    EXPECT_TRUE(reply.empty());
  }
}

TEST(Socks5HandshakeTest, PartialGreetingWaitsForMore) {
  Socks5Handshake handshake;
  Bytes reply;
  for (const Bytes& prefix : {Bytes{}, Bytes{5}, Bytes{5, 2}, Bytes{5, 2, 2}}) {
    EXPECT_EQ(handshake.Read(prefix, reply), State::kGreeting);
    EXPECT_EQ(handshake.consumed(), 0u);
    EXPECT_TRUE(reply.empty());
  }
  EXPECT_EQ(handshake.Read(Bytes{5, 2, 2, 0}, reply), State::kRequest);
  EXPECT_EQ(reply, (Bytes{5, 0}));
}

TEST(Socks5HandshakeTest, PartialRequestWaitsForMore) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes request = ConnectToName("pkg.test", 8080);
  Bytes bytes = Greeting();
  bytes.insert(bytes.end(), request.begin(), request.end() - 1);
  EXPECT_EQ(handshake.Read(bytes, reply), State::kRequest);
  EXPECT_EQ(handshake.consumed(), Greeting().size());
  bytes.push_back(request.back());
  EXPECT_EQ(handshake.Read(bytes, reply), State::kDone);
  EXPECT_EQ(reply, (Bytes{5, 0}));  // the CONNECT's reply is the caller's, once it connected
}

TEST(Socks5HandshakeTest, ConnectToNameIsDoneAndLeavesTheTunnelsBytes) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes handshake_bytes = Concat({Greeting(), ConnectToName("PKG.test", 8080)});
  const Bytes bytes = Concat({handshake_bytes, {0x16, 0x03, 0x01}});
  EXPECT_EQ(handshake.Read(bytes, reply), State::kDone);
  EXPECT_EQ(handshake.target().host, "pkg.test");
  EXPECT_EQ(handshake.target().port, 8080);
  EXPECT_EQ(handshake.consumed(), handshake_bytes.size());
  EXPECT_EQ(reply, (Bytes{5, 0}));
}

TEST(Socks5HandshakeTest, ConnectToIpv4AddressNamesItInText) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes bytes = Concat({Greeting(), {5, 1, 0, 1, 198, 51, 100, 10, 0x01, 0xbb}});
  EXPECT_EQ(handshake.Read(bytes, reply), State::kDone);
  EXPECT_EQ(handshake.target().host, "198.51.100.10");
  EXPECT_EQ(handshake.target().port, 443);
  EXPECT_EQ(handshake.consumed(), bytes.size());
}

TEST(Socks5HandshakeTest, ConnectToIpv6AddressNamesItInText) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes address = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const Bytes bytes = Concat({Greeting(), {5, 1, 0, 4}, address, {0x00, 0x50}});
  EXPECT_EQ(handshake.Read(bytes, reply), State::kDone);
  EXPECT_EQ(handshake.target().host, "2001:db8::1");
  EXPECT_EQ(handshake.target().port, 80);
  EXPECT_EQ(handshake.consumed(), bytes.size());
}

TEST(Socks5HandshakeTest, BindAndUdpAssociateAreNotSupported) {
  for (const std::uint8_t command : {2, 3}) {
    Socks5Handshake handshake;
    Bytes reply;
    const Bytes bytes = Concat({Greeting(), {5, command, 0, 1, 198, 51, 100, 10, 0x01, 0xbb}});
    EXPECT_EQ(handshake.Read(bytes, reply), State::kFailed);
    EXPECT_EQ(reply, (Bytes{5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0}));
  }
}

TEST(Socks5HandshakeTest, UnknownAddressTypeIsNotSupported) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes bytes = Concat({Greeting(), {5, 1, 0, 9, 0, 0, 0, 0, 0x01, 0xbb}});
  EXPECT_EQ(handshake.Read(bytes, reply), State::kFailed);
  EXPECT_EQ(reply, (Bytes{5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(Socks5HandshakeTest, EmptyNameFails) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes bytes = Concat({Greeting(), {5, 1, 0, 3, 0, 0x01, 0xbb}});
  EXPECT_EQ(handshake.Read(bytes, reply), State::kFailed);
  EXPECT_EQ(reply, (Bytes{5, 0, 5, 1, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(Socks5HandshakeTest, PortZeroFails) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes bytes = Concat({Greeting(), ConnectToName("pkg.test", 0)});
  EXPECT_EQ(handshake.Read(bytes, reply), State::kFailed);
  EXPECT_EQ(reply, (Bytes{5, 0, 5, 1, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(Socks5HandshakeTest, RequestOfAnotherVersionOrWithReservedByteSetFails) {
  for (const Bytes& request : {Bytes{4, 1, 0, 1, 198, 51, 100, 10, 0x01, 0xbb},
                               Bytes{5, 1, 1, 1, 198, 51, 100, 10, 0x01, 0xbb}}) {
    Socks5Handshake handshake;
    Bytes reply;
    EXPECT_EQ(handshake.Read(Concat({Greeting(), request}), reply), State::kFailed);
    EXPECT_EQ(reply, (Bytes{5, 0, 5, 1, 0, 1, 0, 0, 0, 0, 0, 0}));
  }
}

TEST(Socks5HandshakeTest, HandshakeSplitByteByByteIsRead) {
  Socks5Handshake handshake;
  Bytes reply;
  const Bytes all = Concat({Greeting(), ConnectToName("pkg.test", 8080)});
  Bytes bytes;
  State state = State::kGreeting;
  for (const std::uint8_t byte : all) {
    bytes.push_back(byte);
    state = handshake.Read(bytes, reply);
    if (bytes.size() < Greeting().size()) {
      EXPECT_EQ(state, State::kGreeting) << bytes.size();
    } else if (bytes.size() < all.size()) {
      EXPECT_EQ(state, State::kRequest) << bytes.size();
    }
  }
  EXPECT_EQ(state, State::kDone);
  EXPECT_EQ(reply, (Bytes{5, 0}));  // the method choice, once
  EXPECT_EQ(handshake.target().host, "pkg.test");
  EXPECT_EQ(handshake.target().port, 8080);
  EXPECT_EQ(handshake.consumed(), all.size());
}

TEST(Socks5HandshakeTest, ReplyGivesTheCodeAndNoBoundAddress) {
  EXPECT_EQ(Socks5Handshake::Reply(SocksReply::kSucceeded), (Bytes{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Socks5Handshake::Reply(SocksReply::kNotAllowed), (Bytes{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace cordon::resolver
