#include "resolver/http_requests.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string_view>

namespace cordon::resolver {
namespace {

HttpRequests* Self(http_parser* parser) { return static_cast<HttpRequests*>(parser->data); }

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

HttpRequests::Event Invalid(int status, std::string reason) {
  HttpRequests::Event event;
  event.kind = HttpRequests::Event::Kind::kInvalid;
  event.status = status;
  event.reason = std::move(reason);
  return event;
}

// A Host header's "name", "name:port", "[v6]" or "[v6]:port"; the port is `default_port`
// when none is given. nullopt when it is none of these.
std::optional<ProxyTarget> ParseHostHeader(std::string_view value, std::uint16_t default_port) {
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  std::string_view host = value;
  std::string_view port;
  if (value.starts_with('[')) {
    const std::size_t close = value.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = value.substr(0, close + 1);
    const std::string_view rest = value.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
    }
  } else if (const std::size_t colon = value.rfind(':'); colon != std::string_view::npos) {
    host = value.substr(0, colon);
    port = value.substr(colon + 1);
  }
  if (host.empty()) return std::nullopt;
  ProxyTarget target{CanonicalHost(std::string(host)), default_port};
  if (!port.empty()) {
    unsigned number = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535) {
      return std::nullopt;
    }
    target.port = static_cast<std::uint16_t>(number);
  }
  return target;
}

}  // namespace

std::optional<bool> HttpRequests::StartsARequest(std::span<const char> bytes) {
  constexpr std::size_t kLongestMethod = 16;
  const std::size_t space = std::string_view(bytes.data(), bytes.size()).find(' ');
  if (space == std::string_view::npos) {
    const bool token = std::all_of(bytes.begin(), bytes.end(),
                                   [](char c) { return (c >= 'A' && c <= 'Z') || c == '-'; });
    if (token && bytes.size() <= kLongestMethod) return std::nullopt;
    return false;
  }
  const std::string_view method(bytes.data(), space);
  for (int m = 0;; ++m) {
    const std::string_view known = ::http_method_str(static_cast<http_method>(m));
    if (known == "<unknown>") return false;
    if (known == method) return true;
  }
}

HttpRequests::HttpRequests(std::optional<ProxyTarget> tunnel) : tunnel_target_(std::move(tunnel)) {
  ::http_parser_init(&parser_, HTTP_REQUEST);
  parser_.data = this;
  ::http_parser_settings_init(&settings_);
  settings_.on_message_begin = &HttpRequests::OnMessageBegin;
  settings_.on_url = &HttpRequests::OnUrl;
  settings_.on_header_field = &HttpRequests::OnHeaderField;
  settings_.on_header_value = &HttpRequests::OnHeaderValue;
  settings_.on_headers_complete = &HttpRequests::OnHeadersComplete;
  settings_.on_message_complete = &HttpRequests::OnMessageComplete;
}

int HttpRequests::OnMessageBegin(http_parser* parser) {
  HttpRequests& self = *Self(parser);
  self.url_.clear();
  self.field_.clear();
  self.value_.clear();
  self.in_value_ = false;
  self.host_header_.reset();
  self.host_headers_ = 0;
  return 0;
}

int HttpRequests::OnUrl(http_parser* parser, const char* at, std::size_t length) {
  HttpRequests& self = *Self(parser);
  if (self.url_.size() + length > kMaxHead) return 1;
  self.url_.append(at, length);
  return 0;
}

int HttpRequests::OnHeaderField(http_parser* parser, const char* at, std::size_t length) {
  HttpRequests& self = *Self(parser);
  if (self.in_value_) {
    // The previous header is whole.
    if (EqualsNoCase(self.field_, "host")) {
      self.host_header_ = self.value_;
      ++self.host_headers_;
    }
    self.field_.clear();
    self.value_.clear();
    self.in_value_ = false;
  }
  if (self.field_.size() + length > kMaxHead) return 1;
  self.field_.append(at, length);
  return 0;
}

int HttpRequests::OnHeaderValue(http_parser* parser, const char* at, std::size_t length) {
  HttpRequests& self = *Self(parser);
  self.in_value_ = true;
  if (self.value_.size() + length > kMaxHead) return 1;
  self.value_.append(at, length);
  return 0;
}

int HttpRequests::OnHeadersComplete(http_parser* parser) {
  HttpRequests& self = *Self(parser);
  if (self.in_value_ && EqualsNoCase(self.field_, "host")) {
    self.host_header_ = self.value_;
    ++self.host_headers_;
  }
  self.in_value_ = false;
  self.head_done_ = true;
  // A CONNECT's head ends where the tunnel begins: http_parser_execute returns exactly there
  // (an upgrade). Any other head is judged before its body is read.
  if (parser->method != HTTP_CONNECT) ::http_parser_pause(parser, 1);
  return 0;
}

int HttpRequests::OnMessageComplete(http_parser* parser) {
  Self(parser)->message_done_ = true;
  ::http_parser_pause(parser, 1);
  return 0;
}

HttpRequests::Event HttpRequests::Read(std::span<const char> bytes) {
  for (;;) {
    if (tunnel_) {
      consumed_ = released_ = bytes.size();
      return Event{Event::Kind::kTunnel};
    }
    if (consumed_ >= bytes.size()) break;
    const std::size_t n = ::http_parser_execute(&parser_, &settings_, bytes.data() + consumed_,
                                                bytes.size() - consumed_);
    consumed_ += n;
    const auto err = static_cast<http_errno>(parser_.http_errno);
    if (err == HPE_PAUSED) {
      ::http_parser_pause(&parser_, 0);
    } else if (err != HPE_OK) {
      return Invalid(400, std::string("not an HTTP request: ") + ::http_errno_description(err));
    }
    if (head_done_) {
      head_done_ = false;
      return Judge();
    }
    if (message_done_) {
      message_done_ = false;
      if (parser_.upgrade) {
        // A protocol switch (a WebSocket): the rest goes to the same host, unread.
        tunnel_ = true;
        continue;
      }
      in_head_ = true;
      released_ = head_start_ = consumed_;
      continue;
    }
    if (parser_.upgrade && !in_head_) {
      tunnel_ = true;
      continue;
    }
    if (n == 0) break;
  }
  if (!in_head_) {
    released_ = consumed_;
  } else if (consumed_ - head_start_ > kMaxHead) {
    return Invalid(431, "a request head larger than 64 KiB");
  }
  return Event{Event::Kind::kMore};
}

HttpRequests::Event HttpRequests::JudgeInTunnel() {
  Event event;
  event.kind = Event::Kind::kHead;
  if (parser_.method == HTTP_CONNECT) return Invalid(400, "a CONNECT inside a tunnel");
  event.target = *tunnel_target_;
  http_parser_url url;
  ::http_parser_url_init(&url);
  if (::http_parser_parse_url(url_.data(), url_.size(), 0, &url) == 0 &&
      (url.field_set & (1 << UF_HOST)) != 0) {
    // An absolute URL names the host itself.
    event.target.host = CanonicalHost(std::string(
        std::string_view(url_).substr(url.field_data[UF_HOST].off, url.field_data[UF_HOST].len)));
    event.target.port = (url.field_set & (1 << UF_PORT)) != 0 ? url.port : 80;
  }
  if (host_header_) {
    const std::optional<ProxyTarget> named = ParseHostHeader(*host_header_, event.target.port);
    if (!named) return Invalid(400, "a Host header that names no host");
    // Without a port, a Host header means the tunnel's port.
    event.target = *named;
  }
  return event;
}

HttpRequests::Event HttpRequests::Judge() {
  if (host_headers_ > 1) return Invalid(400, "more than one Host header");
  if (tunnel_target_) return JudgeInTunnel();
  Event event;
  event.kind = Event::Kind::kHead;
  event.connect = parser_.method == HTTP_CONNECT;
  if (parser_.upgrade && !event.connect) {
    return Invalid(400, "a protocol upgrade (a WebSocket) goes through CONNECT");
  }
  http_parser_url url;
  ::http_parser_url_init(&url);
  if (::http_parser_parse_url(url_.data(), url_.size(), event.connect ? 1 : 0, &url) != 0 ||
      (url.field_set & (1 << UF_HOST)) == 0) {
    return Invalid(400, event.connect
                            ? "a CONNECT names host:port"
                            : "cordon's proxy takes a URL in absolute form (http://host/path)");
  }
  const auto field = [&](http_parser_url_fields f) {
    return std::string_view(url_).substr(url.field_data[f].off, url.field_data[f].len);
  };
  if (!event.connect) {
    const std::string_view schema =
        (url.field_set & (1 << UF_SCHEMA)) != 0 ? field(UF_SCHEMA) : std::string_view();
    if (!EqualsNoCase(schema, "http")) {
      return Invalid(400, "cordon's proxy forwards http:// URLs; https:// goes through CONNECT");
    }
  }
  event.target.host = CanonicalHost(std::string(field(UF_HOST)));
  event.target.port = (url.field_set & (1 << UF_PORT)) != 0 ? url.port : 80;
  if (event.target.host.empty() || event.target.port == 0) return Invalid(400, "no host or port");
  if (host_header_) {
    // Without a port, a Host header means http's own (RFC 9110, 7.2).
    const std::optional<ProxyTarget> named = ParseHostHeader(*host_header_, 80);
    if (!named) return Invalid(400, "a Host header that names no host");
    if (*named != event.target) {
      const std::string other = HostPort(*named);
      Event refused = Invalid(403, "the Host header names " + other + ", not the request's " +
                                       event.target.host + ":" + std::to_string(event.target.port));
      refused.target = event.target;
      refused.other_host = other;
      return refused;
    }
  }
  if (!event.connect) {
    // What the origin form keeps: the path (or "/") and the query.
    origin_form_ = (url.field_set & (1 << UF_PATH)) != 0 ? std::string(field(UF_PATH)) : "/";
    if ((url.field_set & (1 << UF_QUERY)) != 0) {
      origin_form_ += "?" + std::string(field(UF_QUERY));
    }
  }
  return event;
}

void HttpRequests::Release(std::vector<char>& bytes) {
  if (parser_.method == HTTP_CONNECT) {
    tunnel_ = true;
  } else if (!origin_form_.empty()) {
    // The request line: empty lines, the method, one space, then the target, which is the URL
    // read (a line that is not exactly that is left as it is).
    std::size_t at = head_start_;
    while (at < consumed_ && (bytes[at] == '\r' || bytes[at] == '\n')) ++at;
    while (at < consumed_ && bytes[at] != ' ') ++at;
    ++at;
    if (at + url_.size() <= consumed_ &&
        std::string_view(bytes.data() + at, url_.size()) == std::string_view(url_)) {
      const auto start = bytes.begin() + static_cast<std::ptrdiff_t>(at);
      bytes.erase(start, start + static_cast<std::ptrdiff_t>(url_.size()));
      bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), origin_form_.begin(),
                   origin_form_.end());
      consumed_ = consumed_ + origin_form_.size() - url_.size();
    }
    origin_form_.clear();
  }
  released_ = consumed_;
  in_head_ = false;
}

void HttpRequests::Drop(std::size_t n) {
  const auto down = [n](std::size_t& offset) { offset = offset > n ? offset - n : 0; };
  down(consumed_);
  down(released_);
  down(head_start_);
}

}  // namespace cordon::resolver
