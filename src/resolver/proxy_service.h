// The sandbox's proxy with network by domain (docs/network-domains.md, decision 0052), as
// cordon-resolver runs it beside its DnsService: the command's process bound a TCP socket to
// the sandbox's 127.0.0.1:1023 (net::kProxyPort) before it dropped its capabilities, and the
// run's environment names it (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY). On it cordon serves:
//
//   - HTTP CONNECT host:port (a tunnel; HTTPS), and plain HTTP requests in absolute form, each
//     of which must name the connection's host in its URL and its Host header alike
//     (http_requests.h);
//   - SOCKS5 CONNECT to a name or an address (socks5_handshake.h), told apart by its first byte.
//
// A name must be allowed on that port by sandbox.domains; it is looked up through DnsService
// (so its answer is filtered as a client's, and every address reported handed_out), and the
// connection is asked of the run's connect broker (Hooks::connect), which decides it by the
// same rule as the command's own connect and passes the connected socket back
// (OnConnected). An address is asked of the broker as it is. A tunnel to a name carries TLS
// only to that name: its ClientHello's server name is read (tls_server_name.h) before a byte
// of it goes on. Every refusal is reported (Hooks::refused) and answered in the client's
// protocol (HTTP 403 or 502 with cordon's reason; a SOCKS reply code) before it is closed.
//
// Then bytes are relayed both ways, a half-close passed on: from the client through a buffer of
// kBuffer bytes (it is read first); from the upstream through a pipe (splice: the bytes are not
// copied through this process), or a buffer when no pipe could be made. At most
// kMaxConnections clients at once; past it a new one is closed at once.
//
// Not thread-safe; one per cordon-resolver process.
#pragma once

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "net/domain_rules.h"
#include "net/resolver_report.h"
#include "resolver/dns_service.h"
#include "resolver/http_requests.h"
#include "resolver/socks5_handshake.h"
#include "resolver/tls_server_name.h"

namespace cordon::resolver {

class ProxyService {
 public:
  static constexpr std::size_t kMaxConnections = 128;
  static constexpr std::size_t kBuffer = 128 * 1024;

  struct Hooks {
    std::function<void(const net::ConnectRequest& request)> connect;
    std::function<void(const net::ProxyRefused& refusal)> refused;
  };
  // `listener`: TCP, listening on the sandbox's 127.0.0.1:kProxyPort.
  ProxyService(core::UniqueFd listener, const net::DomainRules* rules, DnsService* dns,
               const TlsServerNames* server_names, Hooks hooks);

  int listener_fd() const { return listener_.get(); }
  // Closes the connections done with, then adds the sockets to poll and for what.
  void AppendPollSet(std::vector<pollfd>& out);
  // Handles `fd`'s readiness (the listener, a client, or an upstream socket).
  void OnReady(int fd, short revents);
  // The broker's answer to ConnectRequest `tag`: `socket` connected (err 0), or err.
  void OnConnected(std::uint32_t tag, int err, core::UniqueFd socket);
  // Answers the clients whose lookup or connect has waited longer than kWaitLimit (a result
  // lost on a full channel, a host that never answers) with a failure.
  void Expire(std::chrono::steady_clock::time_point now);
  // Whether a client waits for a lookup or a connect (the caller then polls with a timeout
  // and calls Expire).
  bool waiting() const { return !by_tag_.empty() || resolving_ > 0; }
  static constexpr std::chrono::seconds kWaitLimit{60};

 private:
  enum class Phase {
    kFirstBytes,  // which protocol: SOCKS5 or HTTP
    kSocks,       // the SOCKS5 handshake
    kHttpHead,    // the first HTTP request's head
    kResolving,   // the target's name is being looked up
    kConnecting,  // the broker is asked
    kServerName,  // a tunnel to a name: its first bytes are read for a TLS hello
    kHttp,        // plain HTTP requests relayed, each head judged (HttpRequests)
    kRelay,       // a tunnel: bytes relayed as they come
    kClosing,     // what is queued for the client is sent, then the connection is closed
  };
  struct Connection {
    core::UniqueFd client;
    core::UniqueFd upstream;
    Phase phase = Phase::kFirstBytes;
    bool socks = false;
    bool connect_method = false;  // HTTP CONNECT (a tunnel); else plain HTTP
    bool by_name = false;         // the target is a name, not an address
    bool no_address = false;      // by name, the lookup found none: asked by name alone
    ProxyTarget target;
    std::uint32_t tag = 0;
    std::uint64_t serial = 0;
    std::chrono::steady_clock::time_point asked;  // when the lookup began (kResolving)
    std::vector<char> in;                         // the client's bytes not yet sent on
    std::vector<char> out;  // for the client: cordon's replies, then the upstream's bytes
    // The upstream's bytes on their way to the client, after `out` (spliced; none: in `out`).
    core::UniqueFd down_read;
    core::UniqueFd down_write;
    std::size_t down_pending = 0;   // bytes in that pipe
    std::size_t down_capacity = 0;  // its size
    std::unique_ptr<HttpRequests> http;
    Socks5Handshake handshake;
    bool client_eof = false;
    bool upstream_eof = false;
    bool upstream_shut = false;  // its write side shut (the client's end of file passed on)
    bool client_shut = false;
    bool done = false;  // closed by the next AppendPollSet
  };

  void Accept();
  void OnClient(Connection& c, short revents);
  void OnUpstream(Connection& c, short revents);
  // Reads what the upstream has into the pipe (or `out`); true when bytes came.
  bool PullUpstream(Connection& c);
  // Splices in and out per wake-up of a download's upstream, at most.
  static constexpr int kRoundsPerWakeUp = 8;
  // Reads what the phase expects from `c.in` and moves on.
  void Advance(Connection& c);
  void Decide(Connection& c);
  void Lookup(Connection& c, std::uint16_t type);
  void AskBroker(Connection& c, const net::IpAddress& address);
  void Connected(Connection& c);
  // Refuses `c`: reported when `why` is a rule's ("name", "host_header", "server_name"), answered
  // with `status` (HTTP) or `socks` (SOCKS5), then closed.
  void Refuse(Connection& c, const std::string& why, const std::string& detail, int status,
              SocksReply socks, const std::string& reason);
  // Whether a request on `c` for `target` may go on: `c`'s own target; on a tunnel to an
  // address, a name the rules allow on its port.
  bool SameHost(const Connection& c, const ProxyTarget& target) const;
  // Bytes of `c.in` that may go on now.
  std::size_t Sendable(const Connection& c) const;
  void Flush(Connection& c);
  Connection* Find(std::uint64_t serial);

  std::vector<char> scratch_;  // what a read takes, before it is appended to a buffer
  core::UniqueFd listener_;
  const net::DomainRules* rules_;
  DnsService* dns_;
  const TlsServerNames* server_names_;
  Hooks hooks_;
  std::uint64_t next_serial_ = 1;
  std::uint32_t next_tag_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Connection>> connections_;  // by serial
  std::map<int, std::uint64_t> by_fd_;                                // both sockets
  std::map<std::uint32_t, std::uint64_t> by_tag_;                     // asked of the broker
  std::size_t resolving_ = 0;                                         // clients in kResolving
};

}  // namespace cordon::resolver
