// A parent proxy for network by domain (sandbox.parent_proxy, decision 0053): the HTTP proxy
// through which the host itself reaches the network (a corporate network's HTTPS_PROXY). With
// one, every TCP connection cordon makes from the host for a domains sandbox is a CONNECT
// tunnel through it, unless the caller's no_proxy names the destination.
//
// Pure: the setting and the caller's environment in, a value out; the parent's reply head read
// from bytes. The exec layer resolves the parent's host and speaks to it (exec/parent_tunnel.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.h"
#include "net/address_class.h"

namespace cordon::net {

struct ParentProxy {
  std::string host;        // a name (lower case) or an address literal, without brackets
  std::uint16_t port = 0;  // the URL's, else 80 (http's)
  // Where the parent is not used: the caller's no_proxy entries as written (lower case,
  // without a leading "*." or "."; "*": everywhere).
  std::vector<std::string> no_proxy;
  // Where it came from, for messages and status: "HTTPS_PROXY", "https_proxy" or
  // "sandbox.parent_proxy".
  std::string source;
  // sandbox.parent_proxy_by_name: an allowed name the host's DNS has no answer for may be asked
  // of the parent by name (which then resolves it where cordon cannot check the address).
  bool by_name = false;
  bool operator==(const ParentProxy&) const = default;

  // "host:port" ("[2001:db8::1]:3128").
  std::string Address() const;
  // Whether the destination (`name`: the allowed name it was asked by, or empty; `address`:
  // the address, family 0 when connected by name) is connected directly (no_proxy).
  bool Bypasses(std::string_view name, const IpAddress& address) const;
};

// sandbox.parent_proxy's values besides a URL.
inline constexpr std::string_view kParentProxyAuto = "auto";
inline constexpr std::string_view kParentProxyNone = "none";

// Checks a sandbox.parent_proxy value: "auto", "none" or a URL ParseParentProxyUrl takes.
[[nodiscard]] Result<void> CheckParentProxySetting(std::string_view setting);

// The parent for `setting` ("auto": the caller's https_proxy, else HTTPS_PROXY; "none": none;
// else the URL) and `caller_env` ("NAME=value"), or nullopt for none. A parent cordon cannot
// use (another scheme, credentials, a path) is an error naming it and what to do: the run is
// refused rather than sent past the network's proxy.
// `by_name`: sandbox.parent_proxy_by_name, carried into the parent.
[[nodiscard]] Result<std::optional<ParentProxy>> ParentProxyFor(
    std::string_view setting, bool by_name, const std::vector<std::string>& caller_env);

// "http://host:port" (or "host:port", "http://host", a final "/"): the parent. kInvalidArgument
// otherwise, naming `source` and the problem.
[[nodiscard]] Result<ParentProxy> ParseParentProxyUrl(std::string_view url,
                                                      std::string_view source);

// The request that opens a tunnel to `target` ("host:port": a host name as IsHostName takes it,
// or an address, bracketed for IPv6, with a port); nullopt for any other text (no byte of it
// could end the request line or add a header).
std::optional<std::string> ConnectRequestHead(std::string_view target);

// The parent's reply to a CONNECT, read from the first bytes it sent.
struct ParentReply {
  enum class State {
    kIncomplete,  // no end of head yet: read more
    kMalformed,   // not an HTTP/1.x status line, or a head over kMaxParentReplyHead bytes
    kDone,
  };
  State state = State::kIncomplete;
  int status = 0;               // kDone: the status code (200: the tunnel is open)
  std::size_t head_length = 0;  // kDone: bytes up to and including the blank line
  std::string status_line;      // kDone: the first line, printable ASCII only, at most 120
};
inline constexpr std::size_t kMaxParentReplyHead = 8192;
ParentReply ReadParentReply(std::string_view bytes);

}  // namespace cordon::net
