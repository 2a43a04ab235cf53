// What cordon-resolver (src/resolver/) and its run's connect broker say to each other over
// their SOCK_SEQPACKET channel (decision 0051), one message each.
//
// The resolver to the broker, small JSON objects:
//
//   {"query": {"tag": 7, "name": "pkg.test", "type": 1, "class": 1}}    ask the host's resolver
//   {"handed_out": {"address": "192.0.2.7", "name": "pkg.test"}}         before the answer goes
//   {"refused": {"name": "other.test"}}                                  NXDOMAIN was answered
//   {"withheld": {"name": "pkg.test", "address": "127.0.0.1"}}           removed from an answer
//   {"connect": {"tag": 3, "address": "192.0.2.7", "port": 443, "name": "pkg.test"}}
//                                          the proxy asks for a connection ("name": "" for a
//                                          literal; "address": "" when the host's DNS gave
//                                          the name none: by name, through a parent proxy)
//   {"proxy_refused": {"host": "pkg.test", "port": 443, "why": "server_name",
//                      "detail": "other.test"}}   the proxy refused a client ("why": "name",
//                                          "host_header", "server_name", "request")
//
// The broker to the resolver, binary, a kind byte first: 'D', the upstream's reply to query
// `tag`, the tag in place of the reply's id (two bytes, network order), or the tag alone when
// there is no reply to give (the resolver answers SERVFAIL); 'C', the outcome of connect `tag`
// (four bytes each, network order: the tag, then 0 or an errno), with 0 the connected socket
// attached (SCM_RIGHTS).
//
// The resolver parses what the sandboxed command sends, so the broker reads its reports as
// claims of a process that could be subverted: DecodeReport refuses anything malformed or
// oversized, and the broker checks every claim against its own rules and writes every denial's
// text itself (exec/resolver_process.h). Fuzzed: fuzz/resolver_report_fuzz.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "net/address_class.h"

namespace cordon::net {

// Where cordon-resolver finds what its broker starts it with (exec/resolver_process.cc,
// src/resolver/resolver_main.cc): the sandbox's UDP socket, the channel, the sandbox's listening
// TCP socket, and its own program (run as /proc/self/fd/6; nothing above it is left open).
inline constexpr int kResolverDatagramFd = 3;
inline constexpr int kResolverChannelFd = 4;
inline constexpr int kResolverStreamFd = 5;
// The sandbox's listening TCP socket of the proxy (127.0.0.1:kProxyPort, net/sandbox_proxy.h).
inline constexpr int kResolverProxyFd = 6;
inline constexpr int kResolverProgramFd = 7;

struct UpstreamQuery {
  std::uint16_t tag = 0;
  std::string name;  // canonical: lower case, no final dot
  std::uint16_t type = 0;
  std::uint16_t qclass = 0;
  bool operator==(const UpstreamQuery&) const = default;
};

// The resolver handed `address` out for `name`.
struct HandedOut {
  IpAddress address;
  std::string name;
  bool operator==(const HandedOut&) const = default;
};

// The resolver answered NXDOMAIN for `name` (it is not allowed, or not a host name).
struct Refused {
  std::string name;
  bool operator==(const Refused&) const = default;
};

// The resolver removed `address` from the answer for `name` (an internal address not listed).
struct Withheld {
  std::string name;
  IpAddress address;
  bool operator==(const Withheld&) const = default;
};

// The proxy asks the broker to connect to `address`:`port`, for a client that asked for `name`
// (empty: the address itself). The broker decides as for the command's own connect. An address
// of family 0 asks by name alone (never with an empty name): granted only through a parent
// proxy, for a name the host's DNS gave no answer for (decision 0053).
struct ConnectRequest {
  std::uint32_t tag = 0;
  IpAddress address;
  std::uint16_t port = 0;
  std::string name;
  bool operator==(const ConnectRequest&) const = default;
};

// The proxy refused a client's request for `host`:`port`: `why` "name" (the rules do not allow
// it), "host_header" (a request's Host header or URL names `detail`, another host),
// "server_name" (the tunnel's TLS hello names `detail`), "request" (not a request the proxy
// serves: `detail` says what).
struct ProxyRefused {
  std::string host;
  std::uint16_t port = 0;
  std::string why;
  std::string detail;
  bool operator==(const ProxyRefused&) const = default;
};

using ResolverReport =
    std::variant<UpstreamQuery, HandedOut, Refused, Withheld, ConnectRequest, ProxyRefused>;

// The largest report either side writes or reads (a name is at most 253 bytes; a name with
// escaped bytes, which is refused, up to four times that).
inline constexpr std::size_t kMaxResolverReport = 2048;
// The largest upstream reply passed on (one over TCP, RFC 1035's 16-bit length).
inline constexpr std::size_t kMaxUpstreamReply = 65535;

std::string EncodeReport(const ResolverReport& report);
// nullopt: not exactly one report of the shapes above (a missing or mistyped field, another
// top-level key, a number out of range; unknown fields inside one are ignored), or longer than
// kMaxResolverReport.
std::optional<ResolverReport> DecodeReport(std::string_view bytes);

// The broker's message for query `tag`: `reply` with its first two bytes (the id) replaced by
// the tag, or the tag alone when `reply` is empty.
std::vector<std::uint8_t> EncodeUpstreamReply(std::uint16_t tag,
                                              std::span<const std::uint8_t> reply);
struct UpstreamReply {
  std::uint16_t tag = 0;
  std::vector<std::uint8_t> wire;  // empty: no reply (SERVFAIL)
};
// nullopt: no 'D' message, shorter than a tag, or a reply shorter than a DNS header.
std::optional<UpstreamReply> DecodeUpstreamReply(std::span<const std::uint8_t> bytes);

// The outcome of the proxy's ConnectRequest `tag`: 0 (the socket is attached) or an errno.
struct ConnectResult {
  std::uint32_t tag = 0;
  int err = 0;
  bool operator==(const ConnectResult&) const = default;
};
std::vector<std::uint8_t> EncodeConnectResult(const ConnectResult& result);
// nullopt: not a 'C' message of exactly its size.
std::optional<ConnectResult> DecodeConnectResult(std::span<const std::uint8_t> bytes);

}  // namespace cordon::net
