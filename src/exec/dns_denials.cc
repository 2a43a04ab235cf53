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

std::optional<Denial> ProxyRefusal(const net::DomainRules& rules,
                                   const net::ProxyRefused& refused) {
  const std::string_view host = refused.host;
  const std::string_view detail = refused.detail;
  if (!std::all_of(host.begin(), host.end(), [](char c) { return HostNameByte(c) || c == ':'; }) ||
      !std::all_of(detail.begin(), detail.end(), [](char c) { return c >= ' ' && c <= '~'; })) {
    return std::nullopt;  // an honest proxy reports a host name or an address
  }
  const std::string target = host.find(':') != std::string_view::npos
                                 ? fmt::format("[{}]:{}", Cut(host), refused.port)
                                 : fmt::format("{}:{}", Cut(host), refused.port);
  if (refused.why == "name") {
    const net::Decision decision = rules.ForConnect(host, refused.port);
    if (decision.allowed) return std::nullopt;
    if (!decision.rule.empty()) {
      return Denial{
          "connect", target, "network", "sandbox.domains.deny: " + decision.rule,
          "by your configuration: remove " + decision.rule + " from sandbox.domains.deny"};
    }
    // The name is allowed on other ports: that port; else the name.
    const bool name_allowed = rules.ForName(host).allowed;
    return Denial{"connect", target, "network",
                  name_allowed
                      ? fmt::format("sandbox.network: domains (cordon's proxy: {} is not allowed "
                                    "on port {})",
                                    Cut(host), refused.port)
                      : "sandbox.network: domains (cordon's proxy: not in sandbox.domains.allow)",
                  fmt::format("allow it for this command: cordon run --allow-domain {}, or add "
                              "it to sandbox.domains.allow in your config",
                              name_allowed ? target : Cut(host))};
  }
  if (refused.why == "host_header") {
    return Denial{"connect", target, "network",
                  fmt::format("cordon's proxy: a request on a connection to {} named another "
                              "host ({}): each connection reaches only the host it was opened for",
                              target, Cut(detail)),
                  "by design (no domain fronting): open a connection for each host"};
  }
  if (refused.why == "server_name") {
    return Denial{"connect", target, "network",
                  fmt::format("cordon's proxy: the tunnel to {} began a TLS hello for another "
                              "name ({}): a tunnel to a name carries TLS only to that name",
                              target, Cut(detail)),
                  "by design (no domain fronting): connect to the name the TLS client asks for "
                  "(and allow it)"};
  }
  return std::nullopt;
}

Denial NoUpstream(std::string_view name, std::string_view problem) {
  return Denial{"dns", Cut(name), "network",
                fmt::format("cordon's resolver has no upstream: {}", problem),
                "check the host's /etc/resolv.conf (its first nameserver must be reachable)"};
}

}  // namespace cordon::exec
