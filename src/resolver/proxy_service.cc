#include "resolver/proxy_service.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "net/address_class.h"
#include "net/domain_pattern.h"

namespace cordon::resolver {
namespace {

using core::UniqueFd;

constexpr std::uint16_t kTypeA = 1;
constexpr std::uint16_t kTypeAaaa = 28;

std::string_view Phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Bad Gateway";
  }
}

std::string HttpAnswer(int status, const std::string& reason) {
  const std::string body = "cordon: " + reason + "\n";
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(Phrase(status)) +
         "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

using net::IsHostName;

// A host name, an address, or host:port as a client names one (the detail of a refusal).
bool IsHostText(std::string_view text) {
  return text.size() <= 253 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                  c == '.' || c == ':' || c == '[' || c == ']';
         });
}

enum class Received { kData, kNothing, kEnd, kError };

// A pipe's capacity: what F_SETPIPE_SZ asks for (Linux's default for an unprivileged caller's
// largest, /proc/sys/fs/pipe-max-size), and what a pipe has when that is refused (16 pages).
constexpr std::size_t kLargePipe = 1024 * 1024;
constexpr std::size_t kPipe = 64 * 1024;

// Appends what `fd` holds to `buffer`, up to ProxyService::kBuffer bytes in it (read into
// `scratch` first, which is kBuffer long).
Received ReadInto(int fd, std::vector<char>& buffer, std::vector<char>& scratch) {
  const std::size_t room = ProxyService::kBuffer - std::min(buffer.size(), ProxyService::kBuffer);
  const ssize_t n = ::recv(fd, scratch.data(), room, MSG_DONTWAIT);
  if (n > 0) buffer.insert(buffer.end(), scratch.data(), scratch.data() + n);
  if (n > 0) return Received::kData;
  if (n == 0) return Received::kEnd;
  return errno == EAGAIN || errno == EINTR ? Received::kNothing : Received::kError;
}

SocksReply SocksCode(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      return SocksReply::kNotAllowed;
    case ECONNREFUSED:
      return SocksReply::kConnectionRefused;
    case ENETUNREACH:
      return SocksReply::kNetworkUnreachable;
    case EHOSTUNREACH:
    case ETIMEDOUT:
      return SocksReply::kHostUnreachable;
    default:
      return SocksReply::kGeneralFailure;
  }
}

}  // namespace

ProxyService::ProxyService(UniqueFd listener, const net::DomainRules* rules, DnsService* dns,
                           const TlsServerNames* server_names, Hooks hooks)
    : listener_(std::move(listener)),
      rules_(rules),
      dns_(dns),
      server_names_(server_names),
      hooks_(std::move(hooks)) {
  scratch_.resize(kBuffer);
  // Made before the filter (which has no fcntl): accepting never blocks.
  const int flags = ::fcntl(listener_.get(), F_GETFL);
  if (flags >= 0) (void)::fcntl(listener_.get(), F_SETFL, flags | O_NONBLOCK);
}

ProxyService::Connection* ProxyService::Find(std::uint64_t serial) {
  const auto it = connections_.find(serial);
  return it == connections_.end() || it->second->done ? nullptr : it->second.get();
}

void ProxyService::AppendPollSet(std::vector<pollfd>& out) {
  for (auto it = connections_.begin(); it != connections_.end();) {
    Connection& c = *it->second;
    if (c.done) {
      by_fd_.erase(c.client.get());
      if (c.upstream) by_fd_.erase(c.upstream.get());
      if (c.phase == Phase::kResolving) --resolving_;
      if (c.phase == Phase::kConnecting) by_tag_.erase(c.tag);
      it = connections_.erase(it);
      continue;
    }
    // A socket is polled only for what is wanted of it now: one polled for nothing would
    // report its hang-up at every round, and the loop would spin.
    short client = 0;
    if (!c.client_eof && c.phase != Phase::kClosing && c.in.size() < kBuffer) client |= POLLIN;
    if (!c.out.empty() || c.down_pending > 0) client |= POLLOUT;
    if (client != 0) out.push_back({c.client.get(), client, 0});
    if (c.upstream) {
      short upstream = 0;
      const bool room = c.down_write ? c.down_pending < c.down_capacity : c.out.size() < kBuffer;
      if (!c.upstream_eof && c.phase != Phase::kClosing && room) upstream |= POLLIN;
      if (Sendable(c) > 0) upstream |= POLLOUT;
      if (upstream != 0) out.push_back({c.upstream.get(), upstream, 0});
    }
    ++it;
  }
  if (listener_) out.push_back({listener_.get(), POLLIN, 0});
}

void ProxyService::OnReady(int fd, short revents) {
  if (fd == listener_.get()) return Accept();
  const auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return;
  Connection* c = Find(it->second);
  if (c == nullptr) return;
  if (fd == c->client.get()) {
    OnClient(*c, revents);
  } else {
    OnUpstream(*c, revents);
  }
}

void ProxyService::Accept() {
  for (int round = 0; round < 16; ++round) {
    UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!client) return;                                   // EAGAIN: all taken
    if (connections_.size() >= kMaxConnections) continue;  // closed at once
    auto c = std::make_unique<Connection>();
    c->serial = next_serial_++;
    by_fd_[client.get()] = c->serial;
    c->client = std::move(client);
    connections_.emplace(c->serial, std::move(c));
  }
}

void ProxyService::OnClient(Connection& c, short revents) {
  if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !c.client_eof &&
      c.phase != Phase::kClosing && c.in.size() < kBuffer) {
    const Received got = ReadInto(c.client.get(), c.in, scratch_);
    if (got == Received::kEnd) c.client_eof = true;
    if (got == Received::kError) {
      c.done = true;
      return;
    }
  }
  Advance(c);
}

void ProxyService::OnUpstream(Connection& c, short revents) {
  if ((revents & (POLLIN | POLLHUP | POLLERR)) == 0) return Flush(c);
  // A download: while the upstream has bytes and the client takes all of them, another splice
  // in and out in this wake-up rather than a round of the main loop for each. Asked of the
  // upstream alone first: a splice from a socket that is not O_NONBLOCK would wait for bytes.
  for (int round = 0; round < kRoundsPerWakeUp; ++round) {
    if (round > 0) {
      pollfd p{c.upstream.get(), POLLIN, 0};
      if (::poll(&p, 1, 0) != 1 || (p.revents & POLLIN) == 0) break;
    }
    const bool more = PullUpstream(c);
    Flush(c);
    if (!more || c.done || !c.down_write || c.down_pending != 0) break;
  }
}

bool ProxyService::PullUpstream(Connection& c) {
  if (c.upstream_eof || c.phase == Phase::kClosing) return false;
  Received got = Received::kNothing;
  if (c.down_write && c.down_pending < c.down_capacity) {
    const ssize_t n = ::splice(c.upstream.get(), nullptr, c.down_write.get(), nullptr,
                               c.down_capacity - c.down_pending, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) c.down_pending += static_cast<std::size_t>(n);
    got = n > 0    ? Received::kData
          : n == 0 ? Received::kEnd
                   : (errno == EAGAIN || errno == EINTR ? Received::kNothing : Received::kError);
  } else if (!c.down_write && c.out.size() < kBuffer) {
    got = ReadInto(c.upstream.get(), c.out, scratch_);
  }
  if (got == Received::kEnd) c.upstream_eof = true;
  if (got == Received::kError) {
    // Reset: what came before it still goes to the client, then the connection closes.
    c.upstream_eof = true;
    c.phase = Phase::kClosing;
  }
  return got == Received::kData;
}

void ProxyService::Advance(Connection& c) {
  for (bool again = true; again && !c.done;) {
    again = false;
    switch (c.phase) {
      case Phase::kFirstBytes:
        if (c.in.empty()) break;
        c.socks = static_cast<std::uint8_t>(c.in[0]) == Socks5Handshake::kVersion;
        if (!c.socks) c.http = std::make_unique<HttpRequests>();
        c.phase = c.socks ? Phase::kSocks : Phase::kHttpHead;
        again = true;
        break;
      case Phase::kSocks: {
        std::vector<std::uint8_t> reply;
        const auto state = c.handshake.Read(
            std::span(reinterpret_cast<const std::uint8_t*>(c.in.data()), c.in.size()), reply);
        c.out.insert(c.out.end(), reply.begin(), reply.end());
        if (state == Socks5Handshake::State::kFailed) {
          c.phase = Phase::kClosing;
        } else if (state == Socks5Handshake::State::kDone) {
          c.target = c.handshake.target();
          c.in.erase(c.in.begin(),
                     c.in.begin() + static_cast<std::ptrdiff_t>(c.handshake.consumed()));
          Decide(c);
        }
        break;
      }
      case Phase::kHttpHead: {
        const HttpRequests::Event event = c.http->Read(c.in);
        if (event.kind == HttpRequests::Event::Kind::kHead) {
          c.target = event.target;
          c.connect_method = event.connect;
          Decide(c);
        } else if (event.kind == HttpRequests::Event::Kind::kInvalid) {
          if (c.target.host.empty()) c.target = event.target;
          Refuse(c, event.status == 403 ? "host_header" : "", event.other_host, event.status,
                 SocksReply::kGeneralFailure, event.reason);
        }
        break;
      }
      case Phase::kServerName: {
        const TlsServerNames::Verdict verdict = server_names_->Read(
            std::span(reinterpret_cast<const std::uint8_t*>(c.in.data()), c.in.size()));
        using Kind = TlsServerNames::Verdict::Kind;
        if (verdict.kind == Kind::kNotTls) {
          // HTTP in the tunnel (a method, then a space): each request is judged by its Host as
          // the proxy's own are. Anything else (SSH, a database) goes on as it comes.
          const std::optional<bool> http = HttpRequests::StartsARequest(c.in);
          if (!http) {
            if (c.client_eof) c.done = true;
            break;
          }
          if (*http) {
            c.http = std::make_unique<HttpRequests>(c.target);
            c.phase = Phase::kHttp;
          } else {
            c.phase = Phase::kRelay;
          }
          again = true;
        } else if (verdict.kind == Kind::kName &&
                   (verdict.name.empty() || SameHost(c, {verdict.name, c.target.port}))) {
          c.phase = Phase::kRelay;
        } else if (verdict.kind == Kind::kName) {
          Refuse(c, "server_name", verdict.name, 403, SocksReply::kNotAllowed,
                 "the TLS server name " + verdict.name + " is not " + c.target.host);
        } else if (verdict.kind == Kind::kInvalid) {
          Refuse(c, "server_name", "", 403, SocksReply::kNotAllowed,
                 "a TLS hello cordon cannot read");
        } else if (c.client_eof) {
          c.done = true;
        }
        break;
      }
      case Phase::kHttp: {
        const HttpRequests::Event event = c.http->Read(c.in);
        if (event.kind == HttpRequests::Event::Kind::kHead) {
          if (event.connect) {
            Refuse(c, "", "", 400, SocksReply::kGeneralFailure,
                   "a CONNECT on a connection already in use");
          } else if (SameHost(c, event.target)) {
            c.http->Release(c.in);
            again = true;
          } else {
            Refuse(c, "host_header", HostPort(event.target), 403, SocksReply::kNotAllowed,
                   "a request for " + HostPort(event.target) + " on a connection to " +
                       HostPort(c.target));
          }
        } else if (event.kind == HttpRequests::Event::Kind::kInvalid) {
          Refuse(c, event.status == 403 ? "host_header" : "", event.other_host, event.status,
                 SocksReply::kGeneralFailure, event.reason);
        } else if (event.kind == HttpRequests::Event::Kind::kTunnel) {
          c.http.reset();
          c.phase = Phase::kRelay;
        }
        break;
      }
      case Phase::kResolving:
      case Phase::kConnecting:
      case Phase::kRelay:
      case Phase::kClosing:
        break;
    }
  }
  Flush(c);
}

void ProxyService::Decide(Connection& c) {
  if (const std::optional<net::IpAddress> address = net::ParseAddress(c.target.host)) {
    c.by_name = false;
    return AskBroker(c, *address);
  }
  if (!IsHostName(c.target.host)) {
    return Refuse(c, "", "", 400, SocksReply::kGeneralFailure,
                  "\"" + c.target.host.substr(0, 64) + "\" is no host name");
  }
  if (const net::Decision decision = rules_->ForConnect(c.target.host, c.target.port);
      !decision.allowed) {
    return Refuse(c, "name", "", 403, SocksReply::kNotAllowed,
                  HostPort(c.target) +
                      " is not allowed by this run's network rules "
                      "(sandbox.domains); the run's denials say how to allow it");
  }
  c.by_name = true;
  c.phase = Phase::kResolving;
  c.asked = std::chrono::steady_clock::now();
  ++resolving_;
  Lookup(c, kTypeA);
}

void ProxyService::Lookup(Connection& c, std::uint16_t type) {
  const std::uint64_t serial = c.serial;
  dns_->Lookup(c.target.host, type, [this, serial, type](std::vector<net::IpAddress> addresses) {
    Connection* found = Find(serial);
    if (found == nullptr || found->phase != Phase::kResolving) return;
    if (!addresses.empty()) {
      AskBroker(*found, addresses.front());
    } else if (type == kTypeA) {
      Lookup(*found, kTypeAaaa);
    } else {
      // None: the broker connects by name only through a parent proxy, when the host's DNS
      // gave the name no answer (decision 0053); else it answers EHOSTUNREACH.
      found->no_address = true;
      AskBroker(*found, net::IpAddress{});
    }
  });
}

void ProxyService::AskBroker(Connection& c, const net::IpAddress& address) {
  if (c.phase == Phase::kResolving) --resolving_;
  c.tag = next_tag_++;
  by_tag_[c.tag] = c.serial;
  c.phase = Phase::kConnecting;
  if (!c.by_name) c.asked = std::chrono::steady_clock::now();
  hooks_.connect(net::ConnectRequest{c.tag, address, c.target.port,
                                     c.by_name ? c.target.host : std::string()});
}

void ProxyService::OnConnected(std::uint32_t tag, int err, UniqueFd socket) {
  const auto it = by_tag_.find(tag);
  if (it == by_tag_.end()) return;
  Connection* c = Find(it->second);
  by_tag_.erase(it);
  if (c == nullptr || c->phase != Phase::kConnecting) return;
  if (err != 0 || !socket) {
    if (err == 0) err = EIO;
    const bool refused = err == EACCES || err == EPERM;
    std::string why =
        refused ? HostPort(c->target) +
                      " is refused by this run's network rules (the run's denials say why)"
                : "could not connect to " + HostPort(c->target) + ": " + std::strerror(err);
    if (c->no_address && err == EHOSTUNREACH) {
      why = "no address for " + c->target.host +
            ": the name has none, or only internal ones, which cordon withholds unless they "
            "are listed (the run's denials say which)";
    }
    Refuse(*c, "", "", refused ? 403 : 502, SocksCode(err), why);
    return Flush(*c);
  }
  by_fd_[socket.get()] = c->serial;
  c->upstream = std::move(socket);
  Connected(*c);
}

void ProxyService::Connected(Connection& c) {
  // Where the upstream's bytes go through: without a pipe (out of descriptors), the buffer.
  int pipe[2];
  if (::pipe2(pipe, O_NONBLOCK | O_CLOEXEC) == 0) {
    c.down_read = UniqueFd(pipe[0]);
    c.down_write = UniqueFd(pipe[1]);
    // Fewer, larger splices for a download.
    const int size = ::fcntl(pipe[1], F_SETPIPE_SZ, static_cast<int>(kLargePipe));
    c.down_capacity = size > 0 ? static_cast<std::size_t>(size) : kPipe;
  }
  // A tunnel's first bytes are read (a TLS hello, HTTP) whatever it goes to.
  const Phase tunnel = Phase::kServerName;
  if (c.socks) {
    const std::vector<std::uint8_t> reply = Socks5Handshake::Reply(SocksReply::kSucceeded);
    c.out.insert(c.out.end(), reply.begin(), reply.end());
    c.phase = tunnel;
  } else if (c.connect_method) {
    constexpr std::string_view kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";
    c.out.insert(c.out.end(), kEstablished.begin(), kEstablished.end());
    // The CONNECT's head is cordon's; what follows it is the tunnel's.
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(c.http->consumed()));
    c.http.reset();
    c.phase = tunnel;
  } else {
    c.http->Release(c.in);
    c.phase = Phase::kHttp;
  }
  Advance(c);
}

void ProxyService::Refuse(Connection& c, const std::string& why, const std::string& detail,
                          int status, SocksReply socks, const std::string& reason) {
  if (c.phase == Phase::kResolving) --resolving_;
  if (c.phase == Phase::kConnecting) by_tag_.erase(c.tag);
  if (!why.empty() && !c.target.host.empty() && c.target.port != 0) {
    // The other host as the client wrote it only when it is one (it is the command's text).
    const std::string other = IsHostText(detail) ? detail.substr(0, 253) : std::string();
    hooks_.refused(net::ProxyRefused{c.target.host.substr(0, 253), c.target.port, why, other});
  }
  if (c.upstream) {
    // Mid-connection: the client's protocol has no place for an answer; it is closed.
    by_fd_.erase(c.upstream.get());
    c.upstream.Reset();
  } else if (c.socks) {
    const std::vector<std::uint8_t> reply = Socks5Handshake::Reply(socks);
    c.out.insert(c.out.end(), reply.begin(), reply.end());
  } else {
    const std::string answer = HttpAnswer(status, reason);
    c.out.insert(c.out.end(), answer.begin(), answer.end());
  }
  c.in.clear();
  c.http.reset();
  c.phase = Phase::kClosing;
}

bool ProxyService::SameHost(const Connection& c, const ProxyTarget& target) const {
  if (target == c.target) return true;
  // A tunnel to an address: the name the client means must be one the rules allow there.
  return !c.by_name && target.port == c.target.port && IsHostName(target.host) &&
         rules_->ForConnect(target.host, target.port).allowed;
}

void ProxyService::Expire(std::chrono::steady_clock::time_point now) {
  for (auto& [serial, c] : connections_) {
    if (c->done || (c->phase != Phase::kResolving && c->phase != Phase::kConnecting) ||
        now - c->asked < kWaitLimit) {
      continue;
    }
    Refuse(*c, "", "", 502, SocksReply::kHostUnreachable,
           "no connection to " + HostPort(c->target) + " within " +
               std::to_string(kWaitLimit.count()) + " s");
    Flush(*c);
  }
}

std::size_t ProxyService::Sendable(const Connection& c) const {
  if (!c.upstream) return 0;
  if (c.phase == Phase::kRelay) return c.in.size();
  if (c.phase == Phase::kHttp && c.http) return std::min(c.http->released(), c.in.size());
  return 0;
}

void ProxyService::Flush(Connection& c) {
  if (c.done) return;
  while (!c.out.empty()) {
    const ssize_t n =
        ::send(c.client.get(), c.out.data(), c.out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(c.out.begin(), c.out.begin() + n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      break;
    } else {
      c.done = true;
      return;
    }
  }
  // Then what the pipe holds (always after `out`: cordon's answers come first).
  while (c.out.empty() && c.down_pending > 0) {
    const ssize_t n = ::splice(c.down_read.get(), nullptr, c.client.get(), nullptr, c.down_pending,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      c.down_pending -= static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      break;
    } else {
      c.done = true;
      return;
    }
  }
  const bool to_client_empty = c.out.empty() && c.down_pending == 0;
  for (std::size_t ready = Sendable(c); ready > 0; ready = Sendable(c)) {
    const ssize_t n = ::send(c.upstream.get(), c.in.data(), ready, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      c.in.erase(c.in.begin(), c.in.begin() + n);
      if (c.http) c.http->Drop(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      break;
    } else {
      c.done = true;
      return;
    }
  }
  switch (c.phase) {
    case Phase::kClosing:
      if (to_client_empty) c.done = true;
      return;
    case Phase::kFirstBytes:
    case Phase::kSocks:
    case Phase::kHttpHead:
      // Closed before it asked for anything.
      if (c.client_eof) c.done = true;
      return;
    case Phase::kRelay:
    case Phase::kHttp:
      if (c.client_eof && Sendable(c) == 0 && !c.upstream_shut) {
        (void)::shutdown(c.upstream.get(), SHUT_WR);
        c.upstream_shut = true;
      }
      break;
    case Phase::kResolving:
    case Phase::kConnecting:
    case Phase::kServerName:
      break;
  }
  if (c.upstream_eof && to_client_empty && !c.client_shut) {
    (void)::shutdown(c.client.get(), SHUT_WR);
    c.client_shut = true;
  }
  if (c.client_shut && (c.upstream_shut || c.client_eof)) c.done = true;
}

}  // namespace cordon::resolver
