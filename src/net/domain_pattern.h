// One domain pattern of network "domains" as the user writes it (`example.org`,
// `*.example.org`, `192.0.2.7:443`, `[2001:db8::1]`): parsed, checked and given one canonical
// text, so that the config, the command line and the rules agree on what a pattern means.
//
// Patterns come only from the user's config and the command line, never from the workspace
// or the sandbox; a bad one is refused with a message that names it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "cordon/error.h"

namespace cordon::net {

// One pattern as written in the config: `example.org`, `*.example.org`, `192.0.2.7`,
// `[2001:db8::1]`, each with an optional `:port`.
struct DomainPattern {
  enum class Kind {
    kName,      // exactly `name`
    kWildcard,  // any name strictly below `name` (`*.example.org`: not example.org itself)
    kAddress,   // exactly `address`
  };
  Kind kind = Kind::kName;
  // kName, kWildcard: lower-case labels, no trailing dot (for kWildcard, without the `*.`).
  std::string name;
  // kAddress: IPv6 bytes; an IPv4 address is held v4-mapped (::ffff:a.b.c.d) so that either
  // form of a connect compares equal to it.
  std::array<std::uint8_t, 16> address{};
  std::uint16_t port = 0;  // 0: any port

  bool operator==(const DomainPattern&) const = default;

  // The canonical text: ParseDomainPattern(p.ToString()) == p.
  std::string ToString() const;
  // Whether `name` (already canonical: lower-case, no trailing dot) is covered, ports aside.
  bool MatchesName(std::string_view name) const;
};

// A host name in canonical form: dot-separated labels of 1-63 lower-case letters, digits, '-'
// or '_', at most 253 bytes in all, no final dot, the last label not a number (all digits, or
// 0x and hexadecimal digits: an address to inet_aton and many proxies). What cordon's resolver
// asks, the broker looks up and the parent proxy is asked for; anything else is no name.
bool IsHostName(std::string_view name);

// kInvalidArgument naming `text` and what is wrong with it:
//   invalid domain pattern "*.org": a wildcard on the one-label name "org" would allow a
//   whole top-level domain; name the domains below it
[[nodiscard]] Result<DomainPattern> ParseDomainPattern(std::string_view text);

}  // namespace cordon::net
