// libFuzzer target for the sandbox resolver's DNS messages (src/net/dns_message.h): the
// command's query bytes, and the same bytes taken as an upstream reply to a fixed question.
// Beyond "no crash, no sanitizer report": a query that parses is answerable, and a filtered
// reply parses again with no address the filter refused.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "net/dns_message.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> wire(data, size);
  if (const std::optional<cordon::net::DnsQuestion> q = cordon::net::ParseQuery(wire)) {
    if (cordon::net::AnswerWithoutRecords(wire, cordon::net::kRcodeNxDomain).empty()) {
      std::abort();
    }
    (void)cordon::net::QueryFor(*q, 1);
  } else {
    (void)cordon::net::AnswerWithoutRecords(wire, cordon::net::kRcodeFormErr);
  }
  if (size < 2) return 0;
  const cordon::net::DnsQuestion question{.id = 1, .name = "pkg.test", .type = 1, .qclass = 1};
  const auto id = static_cast<std::uint16_t>((data[0] << 8) | data[1]);
  const auto keep = [](const cordon::net::IpAddress& a) {
    return cordon::net::InternalKind(a) == nullptr;
  };
  if (std::optional<cordon::net::FilteredReply> reply =
          cordon::net::FilterReply(wire, question, id, 7, keep)) {
    for (const cordon::net::IpAddress& a : reply->kept) {
      if (!keep(a)) std::abort();
    }
  }
  return 0;
}
