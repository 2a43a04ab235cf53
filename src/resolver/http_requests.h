// The HTTP requests a client sends the sandbox's proxy on one connection (docs/network-domains.md),
// read with Debian's http-parser: a CONNECT (then a tunnel), or requests in absolute form
// ("GET http://pkg.test/x HTTP/1.1"), each of which must name the host that the connection
// was opened to, in its URL and its Host header alike (anything else would reach another site
// served at the same address: domain fronting). A protocol upgrade (a WebSocket) goes through
// a CONNECT, not here: after one, what follows is no longer read.
//
// Inside a tunnel (constructed with the tunnel's target), the same for the requests a client
// sends its server in origin form ("GET /x", the host in the Host header; none: the tunnel's);
// a CONNECT there is invalid, and an upgrade ends the reading (what follows is the upgraded
// protocol's).
//
// Every request's head is held back until it is whole and judged; what follows it (a body, or
// after a CONNECT the tunnel's bytes) is released as it is read. The caller keeps the bytes
// (HttpRequests reads them in place) and forwards the released prefix.
//
// Not thread-safe; one per client connection.
#pragma once

#include <http_parser.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "resolver/proxy_target.h"

namespace cordon::resolver {

class HttpRequests {
 public:
  // A head larger than this is refused (431).
  static constexpr std::size_t kMaxHead = 64 * 1024;

  struct Event {
    enum class Kind {
      kMore,     // everything was read: more bytes are needed
      kHead,     // a request's head is whole: `head` (the caller judges it and calls Release)
      kTunnel,   // after a CONNECT's head: the rest of the bytes are the tunnel's, unread
      kInvalid,  // not a request cordon's proxy serves: `status` and `reason` for the answer
    };
    Kind kind = Kind::kMore;
    // kHead: where the request goes, and whether it is a CONNECT (kInvalid: as far as known).
    ProxyTarget target;
    bool connect = false;
    int status = 0;
    std::string reason;
    // kInvalid 403: the other host the Host header names ("host:port").
    std::string other_host;
  };

  // `tunnel`: the target of the tunnel these requests travel in (origin form); none: requests
  // to the proxy itself.
  explicit HttpRequests(std::optional<ProxyTarget> tunnel = std::nullopt);
  // Whether the first bytes of a tunnel begin an HTTP request: a method http-parser knows, then
  // a space. nullopt: too few bytes to tell yet.
  static std::optional<bool> StartsARequest(std::span<const char> bytes);

  HttpRequests(const HttpRequests&) = delete;
  HttpRequests& operator=(const HttpRequests&) = delete;

  // Reads on from `consumed()` in `bytes` (the connection's bytes from the first one not yet
  // forwarded, with `consumed()` counted from the same start) until an event. After kHead,
  // not again before Release (the head would be released unjudged). The last byte of a judged
  // head (its final LF) is read, and released, by the next Read.
  Event Read(std::span<const char> bytes);
  // The prefix of those bytes that may be forwarded (the heads judged, the bodies read).
  std::size_t released() const { return released_; }
  // How far the bytes were read.
  std::size_t consumed() const { return consumed_; }
  // The caller forwarded and dropped the first `n` bytes: offsets move down by `n`.
  void Drop(std::size_t n);
  // After kHead, when the caller allows the request: its head is released, and its body as
  // it comes. A request in absolute form is rewritten in `bytes` (the same the last Read saw)
  // to origin form ("GET /x HTTP/1.1"), as a server expects it from a client: not every one
  // takes the absolute form a proxy is sent.
  void Release(std::vector<char>& bytes);

 private:
  static int OnMessageBegin(http_parser* parser);
  static int OnUrl(http_parser* parser, const char* at, std::size_t length);
  static int OnHeaderField(http_parser* parser, const char* at, std::size_t length);
  static int OnHeaderValue(http_parser* parser, const char* at, std::size_t length);
  static int OnHeadersComplete(http_parser* parser);
  static int OnMessageComplete(http_parser* parser);
  Event Judge();
  Event JudgeInTunnel();

  std::optional<ProxyTarget> tunnel_target_;
  http_parser parser_{};
  http_parser_settings settings_{};
  std::size_t consumed_ = 0;
  std::size_t released_ = 0;
  std::size_t head_start_ = 0;
  bool in_head_ = true;        // between a message's start and its head's end
  bool head_done_ = false;     // OnHeadersComplete paused the parser
  bool message_done_ = false;  // OnMessageComplete paused it
  bool tunnel_ = false;
  std::string url_;
  std::string origin_form_;  // the judged request's target in origin form (not a CONNECT's)
  std::string field_;
  std::string value_;
  bool in_value_ = false;
  std::optional<std::string> host_header_;
  int host_headers_ = 0;
};

}  // namespace cordon::resolver
