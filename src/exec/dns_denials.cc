#include "exec/dns_denials.h"

#include <fmt/format.h>

#include <algorithm>

namespace cordon::exec {
namespace {

bool HostNameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

std::string Cut(std::string_view name) {
  return std::string(name.substr(0, std::min(name.size(), kMaxDeniedName)));
}

}  // namespace

std::optional<Denial> RefusedLookup(const net::DomainRules& rules, std::string_view name) {
  // A label with a dot or a byte outside host names in it (printed escaped by the resolver)
  // would match patterns by its text, not by its labels: never a name the rules can allow.
  if (name.empty() || !std::all_of(name.begin(), name.end(), HostNameByte)) {
    return Denial{"dns", Cut(name), "network",
                  "sandbox.network: domains (a name with characters host names do not have)",
                  "by design: only host names (letters, digits, '-', '_') are looked up"};
  }
  const net::Decision decision = rules.ForName(name);
  if (decision.allowed) return std::nullopt;
  if (decision.rule.empty()) {
    return Denial{"dns", Cut(name), "network",
                  "sandbox.network: domains (not in sandbox.domains.allow)",
                  fmt::format("allow it for this command: cordon run --allow-domain {}, or add "
                              "it to sandbox.domains.allow in your config",
                              name)};
  }
  return Denial{"dns", Cut(name), "network", "sandbox.domains.deny: " + decision.rule,
                "by your configuration: remove " + decision.rule + " from sandbox.domains.deny"};
}

Denial WithheldAddress(std::string_view name, const net::IpAddress& address, const char* kind) {
  return Denial{
      "dns", fmt::format("{} -> {}", Cut(name), net::ToString(address)), "network",
      fmt::format("an allowed name resolving to a {} address (DNS rebinding)",
                  kind != nullptr ? kind : "host's own"),
      fmt::format("if you mean that address, allow it explicitly: cordon run --allow-domain {}",
                  net::Bracketed(address))};
}

Denial NoUpstream(std::string_view name, std::string_view problem) {
  return Denial{"dns", Cut(name), "network",
                fmt::format("cordon's resolver has no upstream: {}", problem),
                "check the host's /etc/resolv.conf (its first nameserver must be reachable)"};
}

}  // namespace cordon::exec
