#include "net/resolver_report.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "net/domain_pattern.h"

namespace cordon::net {
namespace {

using nlohmann::json;

constexpr std::size_t kDnsHeader = 12;
constexpr std::uint8_t kReplyKind = 'D';
constexpr std::uint8_t kConnectKind = 'C';
// A host name (253) or an address in text, with room: longer is refused.
constexpr std::size_t kMaxHostText = 255;

// `object[key]` as a string; nullopt when it is missing or not one.
std::optional<std::string> Text(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// `object[key]` as a 16-bit unsigned number; nullopt when it is missing, not one, or larger.
std::optional<std::uint16_t> Number(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) return std::nullopt;
  const auto value = it->get<std::uint64_t>();
  if (value > std::numeric_limits<std::uint16_t>::max()) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

std::optional<std::string> Name(const json& object) {
  std::optional<std::string> name = Text(object, "name");
  if (!name || name->empty()) return std::nullopt;
  return name;
}

std::optional<IpAddress> Address(const json& object) {
  const std::optional<std::string> text = Text(object, "address");
  return text ? ParseAddress(*text) : std::nullopt;
}

std::optional<std::uint32_t> Tag(const json& object) {
  const auto it = object.find("tag");
  if (it == object.end() || !it->is_number_unsigned()) return std::nullopt;
  const auto value = it->get<std::uint64_t>();
  if (value > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return static_cast<std::uint32_t>(value);
}

std::optional<ResolverReport> DecodeProxy(const std::string& key, const json& body) {
  const std::optional<std::uint16_t> port = Number(body, "port");
  if (!port || *port == 0) return std::nullopt;
  if (key == "connect") {
    const std::optional<std::uint32_t> tag = Tag(body);
    const std::optional<std::string> text = Text(body, "address");
    std::optional<std::string> name = Text(body, "name");
    if (!tag || !text || !name || name->size() > kMaxHostText) return std::nullopt;
    // No address: by name alone, which needs the name.
    std::optional<IpAddress> address = text->empty() ? IpAddress{} : ParseAddress(*text);
    if (!address || (address->family == 0 && !IsHostName(*name))) return std::nullopt;
    return ConnectRequest{*tag, *address, *port, std::move(*name)};
  }
  std::optional<std::string> host = Text(body, "host");
  std::optional<std::string> why = Text(body, "why");
  std::optional<std::string> detail = Text(body, "detail");
  if (!host || host->empty() || host->size() > kMaxHostText || !why || !detail ||
      detail->size() > kMaxHostText) {
    return std::nullopt;
  }
  if (*why != "name" && *why != "host_header" && *why != "server_name" && *why != "request") {
    return std::nullopt;
  }
  return ProxyRefused{std::move(*host), *port, std::move(*why), std::move(*detail)};
}

std::optional<ResolverReport> Decode(const std::string& key, const json& body) {
  if (!body.is_object()) return std::nullopt;
  if (key == "connect" || key == "proxy_refused") return DecodeProxy(key, body);
  std::optional<std::string> name = Name(body);
  if (!name) return std::nullopt;
  if (key == "query") {
    const std::optional<std::uint16_t> tag = Number(body, "tag");
    const std::optional<std::uint16_t> type = Number(body, "type");
    const std::optional<std::uint16_t> qclass = Number(body, "class");
    if (!tag || !type || !qclass) return std::nullopt;
    return UpstreamQuery{*tag, std::move(*name), *type, *qclass};
  }
  if (key == "refused") return Refused{std::move(*name)};
  std::optional<IpAddress> address = Address(body);
  if (!address) return std::nullopt;
  if (key == "handed_out") return HandedOut{*address, std::move(*name)};
  if (key == "withheld") return Withheld{std::move(*name), *address};
  return std::nullopt;
}

}  // namespace

std::string EncodeReport(const ResolverReport& report) {
  json out;
  if (const auto* q = std::get_if<UpstreamQuery>(&report)) {
    out["query"] = {{"tag", q->tag}, {"name", q->name}, {"type", q->type}, {"class", q->qclass}};
  } else if (const auto* h = std::get_if<HandedOut>(&report)) {
    out["handed_out"] = {{"address", ToString(h->address)}, {"name", h->name}};
  } else if (const auto* r = std::get_if<Refused>(&report)) {
    out["refused"] = {{"name", r->name}};
  } else if (const auto* c = std::get_if<ConnectRequest>(&report)) {
    out["connect"] = {{"tag", c->tag},
                      {"address", c->address.family != 0 ? ToString(c->address) : std::string()},
                      {"port", c->port},
                      {"name", c->name}};
  } else if (const auto* p = std::get_if<ProxyRefused>(&report)) {
    out["proxy_refused"] = {
        {"host", p->host}, {"port", p->port}, {"why", p->why}, {"detail", p->detail}};
  } else {
    const auto& w = std::get<Withheld>(report);
    out["withheld"] = {{"name", w.name}, {"address", ToString(w.address)}};
  }
  // Invalid UTF-8 (never produced: names are host names or ldns's escaped text) is replaced
  // rather than thrown on.
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<ResolverReport> DecodeReport(std::string_view bytes) {
  if (bytes.size() > kMaxResolverReport) return std::nullopt;
  const json parsed = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || parsed.size() != 1) return std::nullopt;
  const auto it = parsed.begin();
  return Decode(it.key(), it.value());
}

std::vector<std::uint8_t> EncodeUpstreamReply(std::uint16_t tag,
                                              std::span<const std::uint8_t> reply) {
  std::vector<std::uint8_t> out{kReplyKind};
  if (reply.size() >= 2) {
    out.insert(out.end(), reply.begin(), reply.end());
  } else {
    out.resize(3);
  }
  out[1] = static_cast<std::uint8_t>(tag >> 8);
  out[2] = static_cast<std::uint8_t>(tag & 0xff);
  return out;
}

std::optional<UpstreamReply> DecodeUpstreamReply(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 3 || bytes[0] != kReplyKind) return std::nullopt;
  bytes = bytes.subspan(1);
  UpstreamReply out;
  out.tag = static_cast<std::uint16_t>((bytes[0] << 8) | bytes[1]);
  if (bytes.size() == 2) return out;
  if (bytes.size() < kDnsHeader) return std::nullopt;
  out.wire.assign(bytes.begin(), bytes.end());
  return out;
}

std::vector<std::uint8_t> EncodeConnectResult(const ConnectResult& result) {
  std::vector<std::uint8_t> out{kConnectKind};
  for (const std::uint32_t value : {result.tag, static_cast<std::uint32_t>(result.err)}) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      out.push_back(static_cast<std::uint8_t>(value >> shift));
    }
  }
  return out;
}

std::optional<ConnectResult> DecodeConnectResult(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != 9 || bytes[0] != kConnectKind) return std::nullopt;
  const auto word = [&](std::size_t at) {
    return (std::uint32_t{bytes[at]} << 24) | (std::uint32_t{bytes[at + 1]} << 16) |
           (std::uint32_t{bytes[at + 2]} << 8) | std::uint32_t{bytes[at + 3]};
  };
  const std::uint32_t err = word(5);
  if (err > 4095) return std::nullopt;  // an errno
  return ConnectResult{word(1), static_cast<int>(err)};
}

}  // namespace cordon::net
