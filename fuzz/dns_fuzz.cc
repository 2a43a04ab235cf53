// libFuzzer target for the sandbox resolver's DNS messages (src/resolver/dns_message.h, in
// cordon-resolver): the command's query bytes, and the same bytes taken as an upstream reply to a
// fixed question. Beyond "no crash, no sanitizer report": a query that parses is answerable, a
// filtered reply parses again with no address the filter refused, and one the cache would keep
// gives the same addresses when taken from it aged.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "resolver/dns_message.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> wire(data, size);
  if (const std::optional<cordon::resolver::DnsQuestion> q = cordon::resolver::ParseQuery(wire)) {
    if (cordon::resolver::AnswerWithoutRecords(wire, cordon::resolver::kRcodeNxDomain).empty()) {
      std::abort();
    }
    (void)cordon::resolver::QueryFor(*q, 1);
  } else {
    (void)cordon::resolver::AnswerWithoutRecords(wire, cordon::resolver::kRcodeFormErr);
  }
  if (size < 2) return 0;
  const cordon::resolver::DnsQuestion question{.id = 1, .name = "pkg.test", .type = 1, .qclass = 1};
  const auto id = static_cast<std::uint16_t>((data[0] << 8) | data[1]);
  const auto keep = [](const cordon::net::IpAddress& a) {
    return cordon::net::InternalKind(a) == nullptr;
  };
  if (std::optional<cordon::resolver::FilteredReply> reply =
          cordon::resolver::FilterReply(wire, question, id, 7, keep)) {
    for (const cordon::net::IpAddress& a : reply->kept) {
      if (!keep(a)) std::abort();
    }
    // What is handed out is an answer that was kept.
    for (const cordon::net::IpAddress& a : reply->handed_out) {
      if (std::find(reply->kept.begin(), reply->kept.end(), a) == reply->kept.end()) std::abort();
    }
    // A reply the cache keeps answers the same when taken from it later, its TTLs aged.
    if (reply->cache_ttl > 0) {
      const std::optional<cordon::resolver::FilteredReply> again = cordon::resolver::FilterReply(
          wire, question, id, 7, keep, static_cast<std::uint32_t>(size % 7200));
      if (!again || again->kept != reply->kept || again->handed_out != reply->handed_out) {
        std::abort();
      }
    }
  }
  return 0;
}
