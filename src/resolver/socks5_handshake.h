// The SOCKS5 handshake (RFC 1928) of a client of the sandbox's proxy, as far as cordon serves
// it: the greeting with "no authentication", then one CONNECT to an IPv4 or IPv6 address or a
// domain name. BIND, UDP ASSOCIATE and authentication methods are answered as unsupported.
// The bytes are the client's; a handshake that is not one of these gets a failure reply and
// the connection is closed. Fuzzed: fuzz/proxy_requests_fuzz.cc.
//
// Not thread-safe; one per client connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "resolver/proxy_target.h"

namespace cordon::resolver {

// Reply codes (RFC 1928, 6).
enum class SocksReply : std::uint8_t {
  kSucceeded = 0,
  kGeneralFailure = 1,
  kNotAllowed = 2,
  kNetworkUnreachable = 3,
  kHostUnreachable = 4,
  kConnectionRefused = 5,
  kCommandNotSupported = 7,
  kAddressTypeNotSupported = 8,
};

class Socks5Handshake {
 public:
  enum class State { kGreeting, kRequest, kDone, kFailed };

  // The first byte a SOCKS5 client sends; an HTTP request starts with a letter.
  static constexpr std::uint8_t kVersion = 5;

  // Reads the client's bytes from the start of the connection; what it takes is counted by
  // consumed(). Bytes to send back are appended to `reply` (the method choice; a failure).
  State Read(std::span<const std::uint8_t> bytes, std::vector<std::uint8_t>& reply);
  std::size_t consumed() const { return consumed_; }
  // kDone: where the client asks to go.
  const ProxyTarget& target() const { return target_; }

  // The reply to a CONNECT (the bound address given as 0.0.0.0:0).
  static std::vector<std::uint8_t> Reply(SocksReply code);

 private:
  State state_ = State::kGreeting;
  std::size_t consumed_ = 0;
  ProxyTarget target_;
};

}  // namespace cordon::resolver
