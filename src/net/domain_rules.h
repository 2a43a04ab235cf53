// The domain allow and deny rules of network "domains" (docs/config.md): which host names,
// and which listed addresses, a sandboxed command may reach, and which rule decided. Pure
// values: the resolver asks ForName when a name is looked up, the connect path asks ForConnect
// (a name whose port is known) or ForAddress (an IP literal). Deny wins over allow; nothing
// matching is a refusal.
//
// The rules come only from the user's config and the command line, never from the workspace
// or the sandbox: parsing them is not hardened against hostile input beyond refusing it.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/error.h"
#include "net/domain_pattern.h"

namespace cordon::net {

// The verdict on one name or address: `rule` is the canonical text of the rule that decided
// (the deny rule, or the allow rule), empty when no rule matched (not listed: refused).
struct Decision {
  bool allowed = false;
  std::string rule;
  bool operator==(const Decision&) const = default;
};

class DomainRules {
 public:
  DomainRules() = default;  // nothing allowed
  DomainRules(std::vector<DomainPattern> allow, std::vector<DomainPattern> deny)
      : allow_(std::move(allow)), deny_(std::move(deny)) {}
  // From pattern texts (SandboxConfig::allowed_domains, denied_domains); the first invalid one
  // fails.
  [[nodiscard]] static Result<DomainRules> Parse(const std::vector<std::string>& allow,
                                                 const std::vector<std::string>& deny);

  // At lookup time, no port known yet: allowed when an allow rule covers `name` (on any port
  // or one port) and no deny rule without a port covers it. Case-insensitive; a trailing dot
  // is ignored.
  Decision ForName(std::string_view name) const;
  // A connection to `name` on `port`: a rule covers it when it covers the name and has no port
  // or this one.
  Decision ForConnect(std::string_view name, std::uint16_t port) const;
  // A connection to an IP literal: only address rules count, ports as in ForConnect. An IPv4
  // address and its v4-mapped IPv6 form are the same address.
  Decision ForAddress(const in6_addr& address, std::uint16_t port) const;
  Decision ForAddress(const in_addr& address, std::uint16_t port) const;

  const std::vector<DomainPattern>& allow() const { return allow_; }
  const std::vector<DomainPattern>& deny() const { return deny_; }

  bool operator==(const DomainRules&) const = default;

 private:
  std::vector<DomainPattern> allow_;
  std::vector<DomainPattern> deny_;
};

}  // namespace cordon::net
