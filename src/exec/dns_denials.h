// The denials of a network-by-domain run's lookups (docs/denials.md), written by the connect
// broker from cordon-resolver's reports and the run's own rules: the resolver names what it
// refused or withheld, never how it is explained, so a subverted resolver cannot put words in
// cordon's mouth, and a report the rules contradict is dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cordon/run.h"
#include "net/address_class.h"
#include "net/domain_rules.h"
#include "net/resolver_report.h"

namespace cordon::exec {

// The longest name a denial carries (a host name is at most 253 bytes; a refused one with
// escaped bytes is cut here).
inline constexpr std::size_t kMaxDeniedName = 256;

// `name` was answered NXDOMAIN: why, by `rules`; nullopt when `rules` allow the name (the
// report is false).
std::optional<Denial> RefusedLookup(const net::DomainRules& rules, std::string_view name);

// `address` was removed from the answer for `name` (DNS rebinding). `kind`: net::InternalKind
// of it, or nullptr for one of the host's own.
Denial WithheldAddress(std::string_view name, const net::IpAddress& address, const char* kind);

// An allowed `name` could not be asked of the host's resolver: `problem` says why.
Denial NoUpstream(std::string_view name, std::string_view problem);

// The sandbox's proxy refused a client (net::ProxyRefused): why, in cordon's words; nullopt
// when `rules` contradict the report (a name refused that they allow on that port).
std::optional<Denial> ProxyRefusal(const net::DomainRules& rules, const net::ProxyRefused& refused);

}  // namespace cordon::exec
