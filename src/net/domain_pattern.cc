#include "net/domain_pattern.h"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace cordon::net {
namespace {

constexpr std::size_t kMaxNameLength = 253;  // RFC 1035, without the trailing dot
constexpr std::size_t kMaxLabelLength = 63;

// `text` quoted for a message, control and non-ASCII bytes escaped: a pattern can come from a
// command line pasted from anywhere, and must not reach the terminal raw.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::unexpected<Error> Refuse(std::string_view text, std::string_view why) {
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("invalid domain pattern {}: {}", Quoted(text), why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsLabelChar(char c) { return (c >= 'a' && c <= 'z') || IsDigit(c) || c == '-' || c == '_'; }

// The port after the last ':' of `text` ("" when there is none), or an error.
Result<std::uint16_t> ParsePort(std::string_view whole, std::string_view digits) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      !std::all_of(digits.begin(), digits.end(), IsDigit)) {
    return Refuse(whole,
                  fmt::format("the port {} is not a number from 1 to 65535", Quoted(digits)));
  }
  if (value == 0 || value > 65535) {
    return Refuse(whole, fmt::format("the port {} is not from 1 to 65535", digits));
  }
  return static_cast<std::uint16_t>(value);
}

// Lower-cases `name`, drops one trailing dot and checks the labels. `whole` is what the user
// wrote, for the message.
Result<std::string> CanonicalName(std::string_view whole, std::string_view name) {
  std::string out(name);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (!out.empty() && out.back() == '.') out.pop_back();
  if (out.empty()) return Refuse(whole, "no host name");
  if (out.size() > kMaxNameLength) {
    return Refuse(whole, fmt::format("a host name has at most {} characters", kMaxNameLength));
  }
  std::string_view rest = out;
  std::string_view last;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::string_view label = rest.substr(0, dot);
    if (label.empty()) return Refuse(whole, "a host name has no empty labels (\"..\")");
    if (label.size() > kMaxLabelLength) {
      return Refuse(whole, fmt::format("the label {} is longer than {} characters", Quoted(label),
                                       kMaxLabelLength));
    }
    if (!std::all_of(label.begin(), label.end(), IsLabelChar)) {
      return Refuse(whole, fmt::format("the label {} may hold only letters, digits, '-' and '_'",
                                       Quoted(label)));
    }
    if (label.front() == '-' || label.back() == '-') {
      return Refuse(whole, fmt::format("the label {} starts or ends with '-'", Quoted(label)));
    }
    last = label;
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
  // Resolvers and clients read "127.1" or "10.0.0.1" as an address, not a name: allowing it as
  // a name would allow that address.
  if (std::all_of(last.begin(), last.end(), IsDigit)) {
    return Refuse(whole,
                  "a name whose last label is a number reads as an IP address; write an "
                  "address in full (192.0.2.7, [2001:db8::1])");
  }
  return out;
}

// The unspecified address (::, 0.0.0.0/8, also v4-mapped): a connect there is one to the host
// itself, never a destination to allow.
constexpr const char* kThisHost =
    "the unspecified address is this host itself, not a destination (list the address of the "
    "service instead)";

bool IsThisHost(const std::array<std::uint8_t, 16>& a) {
  const bool zero_prefix =
      std::all_of(a.begin(), a.begin() + 10, [](std::uint8_t b) { return b == 0; });
  if (zero_prefix && a[10] == 0xff && a[11] == 0xff) return a[12] == 0;  // v4-mapped 0.0.0.0/8
  return zero_prefix && std::all_of(a.begin() + 10, a.end(), [](std::uint8_t b) { return b == 0; });
}

// `[v6]` or `[v6]:port`.
Result<DomainPattern> ParseBracketed(std::string_view whole) {
  const std::size_t close = whole.find(']');
  if (close == std::string_view::npos) return Refuse(whole, "the '[' has no closing ']'");
  const std::string literal(whole.substr(1, close - 1));
  DomainPattern pattern;
  pattern.kind = DomainPattern::Kind::kAddress;
  in6_addr address{};
  if (::inet_pton(AF_INET6, literal.c_str(), &address) != 1) {
    return Refuse(whole, fmt::format("{} is not an IPv6 address", Quoted(literal)));
  }
  std::memcpy(pattern.address.data(), &address, pattern.address.size());
  if (IsThisHost(pattern.address)) return Refuse(whole, kThisHost);
  const std::string_view after = whole.substr(close + 1);
  if (!after.empty()) {
    if (after.front() != ':') return Refuse(whole, "expected ':PORT' or nothing after ']'");
    CORDON_TRY(pattern.port, ParsePort(whole, after.substr(1)));
  }
  return pattern;
}

bool IsV4Mapped(const std::array<std::uint8_t, 16>& a) {
  return std::all_of(a.begin(), a.begin() + 10, [](std::uint8_t b) { return b == 0; }) &&
         a[10] == 0xff && a[11] == 0xff;
}

}  // namespace

bool IsHostName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  std::size_t label = 0;
  for (const char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    if (!IsLabelChar(c) || ++label > kMaxLabelLength) return false;
  }
  if (label == 0) return false;
  // No top-level label is all digits (RFC 3696, 2), nor a hexadecimal number: such a "name"
  // (127.0.0.1, 127.1, 0x7f000001) is an address to inet_aton and to many proxies.
  const std::string_view last = name.substr(name.size() - label);
  const auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return IsDigit(c); });
  };
  const auto hex = [](std::string_view s) {
    return s.size() > 2 && s.starts_with("0x") && std::all_of(s.begin() + 2, s.end(), [](char c) {
             return IsDigit(c) || (c >= 'a' && c <= 'f');
           });
  };
  return !digits(last) && !hex(last);
}

Result<DomainPattern> ParseDomainPattern(std::string_view text) {
  if (text.empty()) return Refuse(text, "it is empty");
  if (std::any_of(text.begin(), text.end(), [](char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
      })) {
    return Refuse(text, "it contains white space");
  }
  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return Refuse(text, "it contains a control character");
  }
  if (const std::size_t scheme = text.find("://"); scheme != std::string_view::npos) {
    return Refuse(text, fmt::format("write the host name alone, without {}",
                                    Quoted(text.substr(0, scheme + 3))));
  }
  if (text.find('/') != std::string_view::npos) {
    return Refuse(text, "write the host name alone, without a path");
  }
  if (text.front() == '@') {
    return Refuse(text,
                  "a list (@name) is not a pattern; lists are named only in "
                  "sandbox.domains and on the command line");
  }
  if (text.front() == '[') return ParseBracketed(text);

  DomainPattern pattern;
  std::string_view host = text;
  if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    if (text.find(':', colon + 1) != std::string_view::npos) {
      return Refuse(text, "an IPv6 address is written in brackets: [2001:db8::1]:443");
    }
    host = text.substr(0, colon);
    CORDON_TRY(pattern.port, ParsePort(text, text.substr(colon + 1)));
  }
  if (host.empty()) return Refuse(text, "no host name before the port");

  // An IPv4 literal: exactly four decimal parts (inet_pton refuses "127.1" and "0x7f.0.0.1").
  in_addr v4{};
  if (::inet_pton(AF_INET, std::string(host).c_str(), &v4) == 1) {
    pattern.kind = DomainPattern::Kind::kAddress;
    pattern.address[10] = 0xff;
    pattern.address[11] = 0xff;
    std::memcpy(pattern.address.data() + 12, &v4, 4);
    if (IsThisHost(pattern.address)) return Refuse(text, kThisHost);
    return pattern;
  }

  if (host.starts_with("*.")) {
    pattern.kind = DomainPattern::Kind::kWildcard;
    host.remove_prefix(2);
    if (host.empty() || host == ".") {
      return Refuse(text, "a wildcard needs a domain after \"*.\" (*.example.org)");
    }
  }
  if (host.find('*') != std::string_view::npos) {
    return Refuse(text, "'*' is allowed only as a whole first label (*.example.org)");
  }
  CORDON_TRY(pattern.name, CanonicalName(text, host));
  if (pattern.kind == DomainPattern::Kind::kWildcard &&
      pattern.name.find('.') == std::string::npos) {
    return Refuse(text, fmt::format("a wildcard on the one-label name {} would allow a whole "
                                    "top-level domain; name the domains below it",
                                    Quoted(pattern.name)));
  }
  return pattern;
}

std::string DomainPattern::ToString() const {
  std::string host;
  switch (kind) {
    case Kind::kName:
      host = name;
      break;
    case Kind::kWildcard:
      host = "*." + name;
      break;
    case Kind::kAddress: {
      char text[INET6_ADDRSTRLEN] = {};
      if (IsV4Mapped(address)) {
        ::inet_ntop(AF_INET, address.data() + 12, text, sizeof text);
        host = text;
      } else {
        ::inet_ntop(AF_INET6, address.data(), text, sizeof text);
        host = fmt::format("[{}]", text);
      }
      break;
    }
  }
  return port == 0 ? host : fmt::format("{}:{}", host, port);
}

bool DomainPattern::MatchesName(std::string_view candidate) const {
  switch (kind) {
    case Kind::kName:
      return candidate == name;
    case Kind::kWildcard:
      return candidate.size() > name.size() + 1 && candidate.ends_with(name) &&
             candidate[candidate.size() - name.size() - 1] == '.';
    case Kind::kAddress:
      break;
  }
  return false;
}

}  // namespace cordon::net
