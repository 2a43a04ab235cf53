// The DNS messages of the sandbox's resolver (docs/network-domains.md), read and written with
// ldns: the sandbox's query (bytes the command controls: fuzzed, fuzz/dns_fuzz.cc), the
// answer cordon makes for a refused or malformed one, and the upstream resolver's reply with
// its address records filtered before it goes back.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/address_class.h"

namespace cordon::resolver {

inline constexpr std::uint8_t kRcodeNoError = 0;
inline constexpr std::uint8_t kRcodeFormErr = 1;
inline constexpr std::uint8_t kRcodeServFail = 2;
inline constexpr std::uint8_t kRcodeNxDomain = 3;
inline constexpr std::uint8_t kRcodeRefused = 5;

inline constexpr std::uint16_t kPlainDnsSize = 512;

struct DnsQuestion {
  std::uint16_t id = 0;
  std::string name;  // lower case, without the final dot ("" for the root)
  std::uint16_t type = 0;
  std::uint16_t qclass = 0;
  // The largest UDP answer the client takes: its EDNS buffer size, at least 512 (512 without).
  std::uint16_t udp_size = kPlainDnsSize;
};

// A standard query (QR clear, opcode QUERY) with exactly one question; nullopt otherwise.
std::optional<DnsQuestion> ParseQuery(std::span<const std::uint8_t> wire);

// The answer to the query in `wire` with `rcode` and no records (NXDOMAIN for a name that is
// not allowed, REFUSED for a query cordon does not forward); its id and question kept. With
// `truncated`, the TC flag set: the answer does not fit the client's size, which asks it again
// over TCP. Empty when `wire` is not even a DNS header.
std::vector<std::uint8_t> AnswerWithoutRecords(std::span<const std::uint8_t> wire,
                                               std::uint8_t rcode, bool truncated = false);

// A query for `question` with id `id` and recursion desired, for the upstream resolver.
std::vector<std::uint8_t> QueryFor(const DnsQuestion& question, std::uint16_t id);

struct FilteredReply {
  std::vector<std::uint8_t> wire;       // to send back, with the client's id
  std::vector<net::IpAddress> kept;     // the A/AAAA addresses left in it, any section
  std::vector<net::IpAddress> dropped;  // the ones `keep` refused
  // Of `kept`, the answers for the question's name: A/AAAA records of the answer section owned
  // by it or by a name its CNAME chain there leads to (not glue, not other owners).
  std::vector<net::IpAddress> handed_out;
  // How long `reply` may be kept to answer the same question again (RFC 1035 7.3, RFC 2181 5.2):
  // the smallest TTL of its answer and authority records, in seconds, for a NOERROR reply with
  // answers that is not truncated; 0 for any other (a TTL of 0 is for this answer only).
  std::uint32_t cache_ttl = 0;
};

// The upstream's `reply` to `question` (sent with `upstream_id`): nullopt when it is not one
// (another id, another question, malformed). Every A and AAAA record in it (any section) is
// kept only when `keep` says so; the reply goes back with `client_id`. A reply kept `age`
// seconds (a cached one) goes back with each record's TTL less that, down to 0.
std::optional<FilteredReply> FilterReply(std::span<const std::uint8_t> reply,
                                         const DnsQuestion& question, std::uint16_t upstream_id,
                                         std::uint16_t client_id,
                                         const std::function<bool(const net::IpAddress&)>& keep,
                                         std::uint32_t age = 0);

}  // namespace cordon::resolver
