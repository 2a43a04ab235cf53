#include "net/parent_proxy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "net/domain_pattern.h"

namespace cordon::net {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

std::string Trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

// `text` for a message: printable ASCII kept, the rest escaped, at most 200 bytes.
std::string Shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 200)) {
    const auto byte = static_cast<unsigned char>(c);
    out += byte < 0x20 || byte >= 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
  }
  return text.size() > 200 ? out + "..." : out;
}

// Where `url`'s scheme ends ("://"), or npos: only before any '@', '/', '?' or '#' (else the
// "://" is inside a password, a path or a query).
std::size_t SchemeEnd(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return scheme;
  return url.substr(0, scheme).find_first_of("@/?#") == std::string_view::npos
             ? scheme
             : std::string_view::npos;
}

// `url` for a message (it reaches the agent): the scheme and the host and port only — any
// credentials replaced by "***", anything after the authority by "...".
std::string Redacted(std::string_view url) {
  const std::size_t scheme = SchemeEnd(url);
  const std::size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  std::string_view authority = url.substr(start);
  const std::size_t rest = authority.find_first_of("/?#");
  const bool more = rest != std::string_view::npos && rest + 1 < authority.size();
  authority = authority.substr(0, rest);
  std::string out = Shown(url.substr(0, start));
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    out += "***";
    authority.remove_prefix(at);
  }
  return out + Shown(authority) + (more ? "/..." : "");
}

std::unexpected<Error> Refuse(std::string_view source, std::string_view url, std::string_view why) {
  return Fail(ErrorCode::kInvalidArgument,
              fmt::format("the parent proxy {}={} cannot be used: {}", source, Redacted(url), why));
}

bool IsHostByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

// The value of `name` in `env` ("NAME=value"), or nullopt.
std::optional<std::string_view> Lookup(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return std::string_view(entry).substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

// A no_proxy entry "ADDRESS/BITS" covering `address`.
bool InBlock(std::string_view entry, const IpAddress& address) {
  const std::size_t slash = entry.find('/');
  if (slash == std::string_view::npos || address.family == 0) return false;
  const std::optional<IpAddress> base = ParseAddress(std::string(entry.substr(0, slash)));
  unsigned bits = 0;
  const std::string_view digits = entry.substr(slash + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
  if (!base || ec != std::errc() || end != digits.data() + digits.size()) return false;
  // Compared in the IPv6 form, where an IPv4 block's prefix is 96 bits longer.
  const unsigned width = base->family == AF_INET ? 32 : 128;
  if (bits > width) return false;
  if (base->family == AF_INET) bits += 96;
  const std::array<std::uint8_t, 16> a = MappedBytes(*base);
  const std::array<std::uint8_t, 16> b = MappedBytes(address);
  for (unsigned i = 0; i < bits; ++i) {
    const unsigned mask = 0x80u >> (i % 8);
    if ((a[i / 8] & mask) != (b[i / 8] & mask)) return false;
  }
  return true;
}

}  // namespace

std::string ParentProxy::Address() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
}

bool ParentProxy::Bypasses(std::string_view name, const IpAddress& address) const {
  const std::string literal = address.family != 0 ? ToString(address) : std::string();
  for (const std::string& entry : no_proxy) {
    if (entry == "*") return true;
    if (entry.find('/') != std::string::npos) {
      if (InBlock(entry, address)) return true;
      continue;
    }
    if (!literal.empty() && entry == literal) return true;
    if (name.empty()) continue;
    if (name == entry) return true;
    if (name.size() > entry.size() && name.ends_with(entry) &&
        name[name.size() - entry.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

Result<void> CheckParentProxySetting(std::string_view setting) {
  if (setting == kParentProxyAuto || setting == kParentProxyNone) return {};
  Result<ParentProxy> parent = ParseParentProxyUrl(setting, "sandbox.parent_proxy");
  if (!parent) return std::unexpected(std::move(parent).error());
  return {};
}

Result<ParentProxy> ParseParentProxyUrl(std::string_view url, std::string_view source) {
  if (url.empty() || url.size() > 1024) return Refuse(source, url, "not a proxy URL");
  std::string_view rest = url;
  if (const std::size_t scheme = SchemeEnd(rest); scheme != std::string_view::npos) {
    const std::string name = Lower(rest.substr(0, scheme));
    if (name != "http") {
      return Refuse(source, url,
                    fmt::format("cordon chains only a plain http:// parent (a CONNECT proxy), "
                                "not {}://; name an http:// proxy, or set "
                                "sandbox.parent_proxy to \"none\" to connect directly",
                                Shown(name)));
    }
    rest.remove_prefix(scheme + 3);
  }
  if (rest.ends_with('/')) rest.remove_suffix(1);
  if (rest.find('@') != std::string_view::npos) {
    return Refuse(source, url,
                  "it carries credentials, which cordon does not pass on; run a local "
                  "authenticating proxy (such as cntlm) and name it instead");
  }
  if (rest.find_first_of("/?#") != std::string_view::npos) {
    return Refuse(source, url, "a proxy URL has no path; write http://HOST:PORT");
  }
  ParentProxy parent;
  parent.source = std::string(source);
  parent.port = 80;
  std::string_view host = rest;
  std::string_view port;
  bool has_port = false;
  if (rest.starts_with('[')) {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return Refuse(source, url, "an unclosed '['");
    host = rest.substr(1, close - 1);
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Refuse(source, url, "text after the address");
      port = after.substr(1);
      has_port = true;
    }
    if (const std::optional<IpAddress> a = ParseAddress(std::string(host));
        !a || a->family != AF_INET6) {
      return Refuse(source, url, "not an IPv6 address between the brackets");
    }
  } else if (const std::size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    has_port = true;
  }
  parent.host = Lower(host);
  if (parent.host.empty() || (!rest.starts_with('[') &&
                              !std::all_of(parent.host.begin(), parent.host.end(), IsHostByte))) {
    return Refuse(source, url, "no host name or address before the port");
  }
  if (has_port) {
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
        value > 65535) {
      return Refuse(source, url, "the port is not a number from 1 to 65535");
    }
    parent.port = static_cast<std::uint16_t>(value);
  }
  return parent;
}

Result<std::optional<ParentProxy>> ParentProxyFor(std::string_view setting, bool by_name,
                                                  const std::vector<std::string>& caller_env) {
  if (setting == kParentProxyNone) return std::optional<ParentProxy>();
  std::optional<ParentProxy> parent;
  if (setting == kParentProxyAuto || setting.empty()) {
    for (const char* name : {"https_proxy", "HTTPS_PROXY"}) {
      const std::optional<std::string_view> value = Lookup(caller_env, name);
      if (!value || value->empty()) continue;
      CORDON_TRY(parent, ParseParentProxyUrl(*value, name));
      break;
    }
  } else {
    CORDON_TRY(parent, ParseParentProxyUrl(setting, "sandbox.parent_proxy"));
  }
  if (!parent) return parent;
  parent->by_name = by_name;
  for (const char* name : {"no_proxy", "NO_PROXY"}) {
    const std::optional<std::string_view> value = Lookup(caller_env, name);
    if (!value) continue;
    std::string_view list = *value;
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      std::string entry = Lower(Trim(list.substr(0, comma)));
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
      if (entry.starts_with("*.")) entry.erase(0, 2);
      if (entry.starts_with('.')) entry.erase(0, 1);
      // A port ("host:8080") is not told apart: the entry covers the host on every port.
      if (!entry.starts_with('[') && std::count(entry.begin(), entry.end(), ':') == 1) {
        entry.erase(entry.find(':'));
      }
      if (entry.starts_with('[') && entry.find(']') != std::string::npos) {
        entry = entry.substr(1, entry.find(']') - 1);
      }
      if (!entry.empty()) parent->no_proxy.push_back(std::move(entry));
    }
    break;
  }
  return parent;
}

std::optional<std::string> ConnectRequestHead(std::string_view target) {
  const std::size_t colon = target.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view host = target.substr(0, colon);
  const std::string_view port = target.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535 || port.front() == '+') {
    return std::nullopt;
  }
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  const std::optional<IpAddress> address =
      ParseAddress(std::string(bracketed ? host.substr(1, host.size() - 2) : host));
  const bool valid =
      address ? (address->family == AF_INET6) == bracketed : !bracketed && IsHostName(host);
  if (!valid) return std::nullopt;
  return fmt::format("CONNECT {0} HTTP/1.1\r\nHost: {0}\r\n\r\n", target);
}

ParentReply ReadParentReply(std::string_view bytes) {
  ParentReply reply;
  const std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    // "HTTP/1." must be what comes, as far as it has come.
    constexpr std::string_view kStart = "HTTP/1.";
    const std::size_t n = std::min(bytes.size(), kStart.size());
    reply.state = bytes.size() >= kMaxParentReplyHead || bytes.substr(0, n) != kStart.substr(0, n)
                      ? ParentReply::State::kMalformed
                      : ParentReply::State::kIncomplete;
    return reply;
  }
  reply.state = ParentReply::State::kMalformed;
  if (end + 4 > kMaxParentReplyHead) return reply;
  const std::string_view line = bytes.substr(0, bytes.find("\r\n"));
  // "HTTP/1.x NNN reason"
  if (line.size() < 12 || !line.starts_with("HTTP/1.") || (line[7] != '0' && line[7] != '1') ||
      line[8] != ' ') {
    return reply;
  }
  int status = 0;
  for (std::size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') return reply;
    status = status * 10 + (line[i] - '0');
  }
  if (line.size() > 12 && line[12] != ' ') return reply;
  reply.state = ParentReply::State::kDone;
  reply.status = status;
  reply.head_length = end + 4;
  for (char c : line.substr(0, 120)) {
    reply.status_line += c >= 0x20 && c < 0x7f ? c : '?';
  }
  return reply;
}

}  // namespace cordon::net
