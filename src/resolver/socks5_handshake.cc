#include "resolver/socks5_handshake.h"

#include <algorithm>

#include "net/address_class.h"

namespace cordon::resolver {
namespace {

constexpr std::uint8_t kNoAuthentication = 0;
constexpr std::uint8_t kNoAcceptableMethod = 0xff;
constexpr std::uint8_t kConnect = 1;
constexpr std::uint8_t kIpv4 = 1;
constexpr std::uint8_t kDomainName = 3;
constexpr std::uint8_t kIpv6 = 4;

}  // namespace

std::vector<std::uint8_t> Socks5Handshake::Reply(SocksReply code) {
  return {kVersion, static_cast<std::uint8_t>(code), 0, kIpv4, 0, 0, 0, 0, 0, 0};
}

Socks5Handshake::State Socks5Handshake::Read(std::span<const std::uint8_t> bytes,
                                             std::vector<std::uint8_t>& reply) {
  const auto fail = [&](SocksReply code) {
    const std::vector<std::uint8_t> failure = Reply(code);
    reply.insert(reply.end(), failure.begin(), failure.end());
    return state_ = State::kFailed;
  };
  if (state_ == State::kGreeting) {
    // VER NMETHODS METHODS...
    if (bytes.size() < 2) return state_;
    if (bytes[0] != kVersion) return state_ = State::kFailed;
    const std::size_t length = 2 + std::size_t{bytes[1]};
    if (bytes.size() < length) return state_;
    const auto methods = bytes.subspan(2, length - 2);
    if (std::find(methods.begin(), methods.end(), kNoAuthentication) == methods.end()) {
      reply.insert(reply.end(), {kVersion, kNoAcceptableMethod});
      return state_ = State::kFailed;
    }
    reply.insert(reply.end(), {kVersion, kNoAuthentication});
    consumed_ = length;
    state_ = State::kRequest;
  }
  if (state_ != State::kRequest) return state_;
  // VER CMD RSV ATYP DST.ADDR DST.PORT
  const std::span<const std::uint8_t> request = bytes.subspan(consumed_);
  if (request.size() < 5) return state_;
  if (request[0] != kVersion || request[2] != 0) return fail(SocksReply::kGeneralFailure);
  if (request[1] != kConnect) return fail(SocksReply::kCommandNotSupported);
  std::size_t address_length = 0;
  std::size_t address_start = 4;
  switch (request[3]) {
    case kIpv4:
      address_length = 4;
      break;
    case kIpv6:
      address_length = 16;
      break;
    case kDomainName:
      address_length = request[4];
      address_start = 5;
      if (address_length == 0) return fail(SocksReply::kGeneralFailure);
      break;
    default:
      return fail(SocksReply::kAddressTypeNotSupported);
  }
  const std::size_t length = address_start + address_length + 2;
  if (request.size() < length) return state_;
  const std::uint8_t* address = request.data() + address_start;
  if (request[3] == kDomainName) {
    target_.host = CanonicalHost(std::string(address, address + address_length));
  } else {
    const std::optional<net::IpAddress> ip = net::AddressFromBytes(address, address_length);
    if (!ip) return fail(SocksReply::kAddressTypeNotSupported);
    target_.host = net::ToString(*ip);
  }
  target_.port = static_cast<std::uint16_t>((request[length - 2] << 8) | request[length - 1]);
  if (target_.port == 0) return fail(SocksReply::kGeneralFailure);
  consumed_ += length;
  return state_ = State::kDone;
}

}  // namespace cordon::resolver
