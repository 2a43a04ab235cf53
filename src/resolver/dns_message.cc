#include "resolver/dns_message.h"

#include <ldns/ldns.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

namespace cordon::resolver {
namespace {

struct PacketFree {
  void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
using Packet = std::unique_ptr<ldns_pkt, PacketFree>;

// A message read record by record with ldns's record parser (ldns_wire2rr) into a packet of
// our own. Not ldns_wire2pkt: it loses a TSIG record it met before a malformed one (ldns 1.8.3
// leaks it on every such message, which a command can send at will). EDNS (OPT) records are
// left out (cordon's answers carry none); the last one's UDP size goes to `edns_size` (0: none).
Packet Parse(std::span<const std::uint8_t> wire, std::uint16_t* edns_size = nullptr) {
  if (wire.size() < 12) return nullptr;
  const auto u16 = [&](std::size_t at) {
    return static_cast<std::uint16_t>((wire[at] << 8) | wire[at + 1]);
  };
  Packet p(ldns_pkt_new());
  if (!p) return nullptr;
  ldns_pkt_set_id(p.get(), u16(0));
  const std::uint8_t flags = wire[2];
  const std::uint8_t more = wire[3];
  ldns_pkt_set_qr(p.get(), (flags & 0x80) != 0);
  ldns_pkt_set_opcode(p.get(), static_cast<ldns_pkt_opcode>((flags >> 3) & 0x0f));
  ldns_pkt_set_aa(p.get(), (flags & 0x04) != 0);
  ldns_pkt_set_tc(p.get(), (flags & 0x02) != 0);
  ldns_pkt_set_rd(p.get(), (flags & 0x01) != 0);
  ldns_pkt_set_ra(p.get(), (more & 0x80) != 0);
  ldns_pkt_set_ad(p.get(), (more & 0x20) != 0);
  ldns_pkt_set_cd(p.get(), (more & 0x10) != 0);
  ldns_pkt_set_rcode(p.get(), more & 0x0f);
  const std::pair<ldns_pkt_section, std::uint16_t> sections[] = {
      {LDNS_SECTION_QUESTION, u16(4)},
      {LDNS_SECTION_ANSWER, u16(6)},
      {LDNS_SECTION_AUTHORITY, u16(8)},
      {LDNS_SECTION_ADDITIONAL, u16(10)}};
  std::size_t pos = 12;
  for (const auto& [section, count] : sections) {
    for (std::uint16_t i = 0; i < count; ++i) {
      ldns_rr* rr = nullptr;
      if (ldns_wire2rr(&rr, wire.data(), wire.size(), &pos, section) != LDNS_STATUS_OK) {
        return nullptr;
      }
      if (section == LDNS_SECTION_ADDITIONAL && ldns_rr_get_type(rr) == LDNS_RR_TYPE_OPT) {
        if (edns_size != nullptr) *edns_size = static_cast<std::uint16_t>(ldns_rr_get_class(rr));
        ldns_rr_free(rr);
        continue;
      }
      if (!ldns_pkt_push_rr(p.get(), section, rr)) {
        ldns_rr_free(rr);
        return nullptr;
      }
    }
  }
  return p;
}

std::vector<std::uint8_t> Wire(const ldns_pkt* p) {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  if (ldns_pkt2wire(&data, p, &size) != LDNS_STATUS_OK) return {};
  std::vector<std::uint8_t> out(data, data + size);
  std::free(data);
  return out;
}

// "www.example.org" for the owner name "www.EXAMPLE.org.".
std::string NameText(const ldns_rdf* name) {
  char* text = ldns_rdf2str(name);
  if (text == nullptr) return {};
  std::string out(text);
  std::free(text);
  if (!out.empty() && out.back() == '.') out.pop_back();
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Keeps the records of `list` that are not address records `keep` refuses; the section's
// count follows from the list when the packet is written.
ldns_rr_list* Filtered(const ldns_rr_list* list,
                       const std::function<bool(const net::IpAddress&)>& keep, std::uint32_t age,
                       FilteredReply& out) {
  ldns_rr_list* kept = ldns_rr_list_new();
  for (std::size_t i = 0; list != nullptr && i < ldns_rr_list_rr_count(list); ++i) {
    const ldns_rr* rr = ldns_rr_list_rr(list, i);
    const ldns_rr_type type = ldns_rr_get_type(rr);
    if (type == LDNS_RR_TYPE_A || type == LDNS_RR_TYPE_AAAA) {
      const ldns_rdf* data = ldns_rr_rd_count(rr) == 1 ? ldns_rr_rdf(rr, 0) : nullptr;
      const std::optional<net::IpAddress> address =
          data == nullptr ? std::nullopt
                          : net::AddressFromBytes(ldns_rdf_data(data), ldns_rdf_size(data));
      if (!address) continue;
      if (!keep(*address)) {
        out.dropped.push_back(*address);
        continue;
      }
      out.kept.push_back(*address);
    }
    ldns_rr* copy = ldns_rr_clone(rr);
    if (age != 0) {
      const std::uint32_t ttl = ldns_rr_ttl(copy);
      ldns_rr_set_ttl(copy, ttl > age ? ttl - age : 0);
    }
    ldns_rr_list_push_rr(kept, copy);
  }
  return kept;
}

// FilteredReply::cache_ttl of the reply in `p`, before it is filtered.
std::uint32_t CacheTtl(const ldns_pkt* p) {
  const ldns_rr_list* answer = ldns_pkt_answer(p);
  if (ldns_pkt_get_rcode(p) != LDNS_RCODE_NOERROR || ldns_pkt_tc(p) || answer == nullptr ||
      ldns_rr_list_rr_count(answer) == 0) {
    return 0;
  }
  std::uint32_t ttl = UINT32_MAX;
  const ldns_rr_list* const lists[] = {answer, ldns_pkt_authority(p)};
  for (const ldns_rr_list* list : lists) {
    for (std::size_t i = 0; list != nullptr && i < ldns_rr_list_rr_count(list); ++i) {
      const std::uint32_t rr_ttl = ldns_rr_ttl(ldns_rr_list_rr(list, i));
      // A TTL with its top bit set is taken as 0 (RFC 2181, 8).
      ttl = std::min(ttl, rr_ttl > 0x7fffffffU ? 0U : rr_ttl);
    }
  }
  return ttl;
}

// The addresses of `answer` (already filtered) that answer `name`: its A/AAAA records owned by
// `name` or by a name its CNAME records lead to from there. Glue in other sections, and
// records of other owners, are not answers for `name`: an MX or SRV query must not make the
// addresses of a third party's hosts ones the name may reach.
std::vector<net::IpAddress> AddressesFor(const ldns_rr_list* answer, const std::string& name) {
  std::vector<std::string> chain{name};
  const std::size_t count = ldns_rr_list_rr_count(answer);
  const auto in_chain = [&](const ldns_rr* rr) {
    return std::find(chain.begin(), chain.end(), NameText(ldns_rr_owner(rr))) != chain.end();
  };
  // Each round follows one more link; a chain is at most as long as the section.
  for (std::size_t round = 0; round < count; ++round) {
    const std::size_t before = chain.size();
    for (std::size_t i = 0; i < count; ++i) {
      const ldns_rr* rr = ldns_rr_list_rr(answer, i);
      if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_CNAME || ldns_rr_rd_count(rr) != 1 ||
          !in_chain(rr)) {
        continue;
      }
      std::string target = NameText(ldns_rr_rdf(rr, 0));
      if (std::find(chain.begin(), chain.end(), target) == chain.end()) {
        chain.push_back(std::move(target));
      }
    }
    if (chain.size() == before) break;
  }
  std::vector<net::IpAddress> out;
  for (std::size_t i = 0; i < count; ++i) {
    const ldns_rr* rr = ldns_rr_list_rr(answer, i);
    const ldns_rr_type type = ldns_rr_get_type(rr);
    if ((type != LDNS_RR_TYPE_A && type != LDNS_RR_TYPE_AAAA) || ldns_rr_rd_count(rr) != 1 ||
        !in_chain(rr)) {
      continue;
    }
    const ldns_rdf* data = ldns_rr_rdf(rr, 0);
    if (std::optional<net::IpAddress> a =
            net::AddressFromBytes(ldns_rdf_data(data), ldns_rdf_size(data))) {
      out.push_back(*a);
    }
  }
  return out;
}

}  // namespace

std::optional<DnsQuestion> ParseQuery(std::span<const std::uint8_t> wire) {
  std::uint16_t edns_size = 0;
  Packet p = Parse(wire, &edns_size);
  if (!p || ldns_pkt_qr(p.get()) || ldns_pkt_get_opcode(p.get()) != LDNS_PACKET_QUERY) {
    return std::nullopt;
  }
  const ldns_rr_list* questions = ldns_pkt_question(p.get());
  if (questions == nullptr || ldns_rr_list_rr_count(questions) != 1) return std::nullopt;
  const ldns_rr* q = ldns_rr_list_rr(questions, 0);
  DnsQuestion out;
  out.id = ldns_pkt_id(p.get());
  out.name = NameText(ldns_rr_owner(q));
  out.type = static_cast<std::uint16_t>(ldns_rr_get_type(q));
  out.qclass = static_cast<std::uint16_t>(ldns_rr_get_class(q));
  out.udp_size = std::max(kPlainDnsSize, edns_size);
  return out;
}

std::vector<std::uint8_t> AnswerWithoutRecords(std::span<const std::uint8_t> wire,
                                               std::uint8_t rcode, bool truncated) {
  Packet p = Parse(wire);
  if (!p) {
    // Not parseable: answer the header alone (its id and opcode), as a server would.
    if (wire.size() < 12) return {};
    std::vector<std::uint8_t> out(wire.begin(), wire.begin() + 12);
    out[2] = static_cast<std::uint8_t>(0x80 | (out[2] & 0x78) | (truncated ? 0x02 : 0));
    out[3] = static_cast<std::uint8_t>(0x80 | (rcode & 0x0f));  // RA, rcode
    for (std::size_t i = 4; i < 12; ++i) out[i] = 0;            // no sections
    return out;
  }
  ldns_pkt_set_qr(p.get(), true);
  ldns_pkt_set_ra(p.get(), true);
  ldns_pkt_set_aa(p.get(), false);
  ldns_pkt_set_tc(p.get(), truncated);
  ldns_pkt_set_rcode(p.get(), rcode);
  ldns_rr_list_deep_free(ldns_pkt_answer(p.get()));
  ldns_rr_list_deep_free(ldns_pkt_authority(p.get()));
  ldns_rr_list_deep_free(ldns_pkt_additional(p.get()));
  ldns_pkt_set_answer(p.get(), ldns_rr_list_new());
  ldns_pkt_set_authority(p.get(), ldns_rr_list_new());
  ldns_pkt_set_additional(p.get(), ldns_rr_list_new());
  ldns_pkt_set_ancount(p.get(), 0);
  ldns_pkt_set_nscount(p.get(), 0);
  ldns_pkt_set_arcount(p.get(), 0);
  return Wire(p.get());
}

std::vector<std::uint8_t> QueryFor(const DnsQuestion& question, std::uint16_t id) {
  ldns_rdf* name = nullptr;
  const std::string absolute = question.name + ".";
  if (ldns_str2rdf_dname(&name, absolute.c_str()) != LDNS_STATUS_OK) return {};
  Packet p(ldns_pkt_query_new(name, static_cast<ldns_rr_type>(question.type),
                              static_cast<ldns_rr_class>(question.qclass), LDNS_RD));
  if (!p) return {};
  ldns_pkt_set_id(p.get(), id);
  return Wire(p.get());
}

std::optional<FilteredReply> FilterReply(std::span<const std::uint8_t> reply,
                                         const DnsQuestion& question, std::uint16_t upstream_id,
                                         std::uint16_t client_id,
                                         const std::function<bool(const net::IpAddress&)>& keep,
                                         std::uint32_t age) {
  Packet p = Parse(reply);
  if (!p || !ldns_pkt_qr(p.get()) || ldns_pkt_id(p.get()) != upstream_id) return std::nullopt;
  const ldns_rr_list* questions = ldns_pkt_question(p.get());
  if (questions == nullptr || ldns_rr_list_rr_count(questions) != 1) return std::nullopt;
  const ldns_rr* q = ldns_rr_list_rr(questions, 0);
  if (NameText(ldns_rr_owner(q)) != question.name ||
      static_cast<std::uint16_t>(ldns_rr_get_type(q)) != question.type) {
    return std::nullopt;
  }
  FilteredReply out;
  out.cache_ttl = CacheTtl(p.get());
  ldns_rr_list* answer = Filtered(ldns_pkt_answer(p.get()), keep, age, out);
  ldns_rr_list* authority = Filtered(ldns_pkt_authority(p.get()), keep, age, out);
  ldns_rr_list* additional = Filtered(ldns_pkt_additional(p.get()), keep, age, out);
  ldns_rr_list_deep_free(ldns_pkt_answer(p.get()));
  ldns_rr_list_deep_free(ldns_pkt_authority(p.get()));
  ldns_rr_list_deep_free(ldns_pkt_additional(p.get()));
  out.handed_out = AddressesFor(answer, question.name);
  ldns_pkt_set_answer(p.get(), answer);
  ldns_pkt_set_ancount(p.get(), static_cast<std::uint16_t>(ldns_rr_list_rr_count(answer)));
  ldns_pkt_set_authority(p.get(), authority);
  ldns_pkt_set_nscount(p.get(), static_cast<std::uint16_t>(ldns_rr_list_rr_count(authority)));
  ldns_pkt_set_additional(p.get(), additional);
  ldns_pkt_set_arcount(p.get(), static_cast<std::uint16_t>(ldns_rr_list_rr_count(additional)));
  ldns_pkt_set_id(p.get(), client_id);
  out.wire = Wire(p.get());
  if (out.wire.empty()) return std::nullopt;
  return out;
}

}  // namespace cordon::resolver
