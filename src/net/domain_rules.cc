#include "net/domain_rules.h"

#include <algorithm>
#include <cstring>

namespace cordon::net {
namespace {

// What a name is compared as: lower-case, one trailing dot dropped (DNS names are
// case-insensitive, and "example.org." is the same name fully qualified).
std::string CanonicalQuery(std::string_view name) {
  std::string out(name);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

// A rule without a port covers every port.
bool PortCovers(const DomainPattern& rule, std::uint16_t port) {
  return rule.port == 0 || rule.port == port;
}

template <typename Matches>
const DomainPattern* FirstMatch(const std::vector<DomainPattern>& rules, const Matches& matches) {
  for (const DomainPattern& rule : rules) {
    if (matches(rule)) return &rule;
  }
  return nullptr;
}

// Deny first (deny wins), then allow; nothing matching refuses with no rule named.
template <typename DenyMatches, typename AllowMatches>
Decision Decide(const std::vector<DomainPattern>& allow, const std::vector<DomainPattern>& deny,
                const DenyMatches& deny_matches, const AllowMatches& allow_matches) {
  if (const DomainPattern* rule = FirstMatch(deny, deny_matches)) {
    return Decision{.allowed = false, .rule = rule->ToString()};
  }
  if (const DomainPattern* rule = FirstMatch(allow, allow_matches)) {
    return Decision{.allowed = true, .rule = rule->ToString()};
  }
  return Decision{};
}

}  // namespace

Result<DomainRules> DomainRules::Parse(const std::vector<std::string>& allow,
                                       const std::vector<std::string>& deny) {
  std::vector<DomainPattern> parsed[2];
  const std::vector<std::string>* texts[2] = {&allow, &deny};
  for (int i = 0; i < 2; ++i) {
    for (const std::string& text : *texts[i]) {
      CORDON_TRY(DomainPattern pattern, ParseDomainPattern(text));
      parsed[i].push_back(std::move(pattern));
    }
  }
  return DomainRules(std::move(parsed[0]), std::move(parsed[1]));
}

Decision DomainRules::ForName(std::string_view name) const {
  const std::string query = CanonicalQuery(name);
  // A deny rule with a port refuses only connections to that port: the name itself must still
  // resolve for the allowed ports.
  return Decide(
      allow_, deny_, [&](const DomainPattern& r) { return r.port == 0 && r.MatchesName(query); },
      [&](const DomainPattern& r) { return r.MatchesName(query); });
}

Decision DomainRules::ForConnect(std::string_view name, std::uint16_t port) const {
  const std::string query = CanonicalQuery(name);
  auto matches = [&](const DomainPattern& r) {
    return PortCovers(r, port) && r.MatchesName(query);
  };
  return Decide(allow_, deny_, matches, matches);
}

Decision DomainRules::ForAddress(const in6_addr& address, std::uint16_t port) const {
  std::array<std::uint8_t, 16> bytes{};
  std::memcpy(bytes.data(), &address, bytes.size());
  auto matches = [&](const DomainPattern& r) {
    return r.kind == DomainPattern::Kind::kAddress && r.address == bytes && PortCovers(r, port);
  };
  return Decide(allow_, deny_, matches, matches);
}

Decision DomainRules::ForAddress(const in_addr& address, std::uint16_t port) const {
  in6_addr mapped{};
  std::uint8_t* bytes = reinterpret_cast<std::uint8_t*>(&mapped);
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  std::memcpy(bytes + 12, &address, 4);
  return ForAddress(mapped, port);
}

}  // namespace cordon::net
