// The connect broker's half for network by domain (ConnectBroker::DecideOutside and what it
// calls; docs/decisions/0050): a TCP connect beyond the sandbox's loopback decided by the
// domain rules, made from the host's network namespace and put in place of the command's
// socket once the kernel holds it connected.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "exec/connect_broker.h"
#include "exec/outside_socket.h"
#include "linux/system_headers/seccomp.h"
#include "net/address_class.h"
#include "net/domain_pattern.h"

namespace cordon::exec {

using core::UniqueFd;

namespace {

// Whether the command's descriptor `fd` is close-on-exec (its fdinfo "flags", octal).
bool CloseOnExec(pid_t tid, int fd) {
  UniqueFd info(::open(fmt::format("/proc/{}/fdinfo/{}", tid, fd).c_str(), O_RDONLY | O_CLOEXEC));
  char buffer[512];
  const ssize_t n = info ? ::read(info.get(), buffer, sizeof buffer - 1) : -1;
  if (n <= 0) return true;
  buffer[n] = '\0';
  const char* flags = std::strstr(buffer, "flags:");
  return flags == nullptr || (std::strtoul(flags + 6, nullptr, 8) & O_CLOEXEC) != 0;
}

}  // namespace

void ConnectBroker::DrainResolver() {
  if (resolver_) {
    resolver_->Drain([this](Denial denial) { Record(std::move(denial)); },
                     [this](const net::ConnectRequest& request) { ProxyConnect(request); });
  }
}

void ConnectBroker::DecideOutside(std::uint64_t id, pid_t tid, int target_fd, int theirs,
                                  const sockaddr_storage& address, const net::IpAddress& ip,
                                  std::uint16_t port) {
  // Every address the command could have read from the resolver is reported by now.
  DrainResolver();
  if (std::optional<Denial> refusal = RefuseOutside(ip, port)) {
    Record(*std::move(refusal));
    return Respond(id, EACCES);
  }
  // What was read of the command (its memory, descriptor, fdinfo) was read while it waited.
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return;
  const std::string tunnel =
      ViaParent(ip, "") ? fmt::format("{}:{}", net::Bracketed(ip), port) : std::string();
  const int err = ConnectOutside(id, tid, target_fd, theirs, address, tunnel);
  if (err >= 0) Respond(id, err);
}

void ConnectBroker::ProxyConnect(const net::ConnectRequest& request) {
  // Called while the channel is read, in order: the addresses the resolver handed out before
  // the request are known.
  if (request.address.family == 0) return ProxyConnectByName(request);
  // The sandbox's own loopback is the sandbox's: the proxy, which connects from the host's
  // network, never reaches the host's in its place.
  if (net::IsOwnHost(request.address)) {
    const std::string target = fmt::format("{}:{}", net::Bracketed(request.address), request.port);
    Record({"connect", target, "network",
            "cordon's proxy: the sandbox's own address (its loopback is its own; the proxy "
            "never reaches the host's)",
            "connect to it directly, not through the proxy (NO_PROXY lists the loopback)"});
    return resolver_->SendConnectResult(request.tag, EACCES);
  }
  if (std::optional<Denial> refusal = RefuseOutside(request.address, request.port)) {
    Record(*std::move(refusal));
    return resolver_->SendConnectResult(request.tag, EACCES);
  }
  // The proxy's own bound, beside the command's (kMaxParked): a resolver that asks without end
  // gets EAGAIN, not the command's room.
  if (proxy_connects_ >= kMaxProxyConnects) {
    return resolver_->SendConnectResult(request.tag, EAGAIN);
  }
  if (ViaParent(request.address, request.name)) {
    return ProxyTunnel(request.tag,
                       fmt::format("{}:{}", net::Bracketed(request.address), request.port));
  }
  sockaddr_storage address{};
  (void)net::SockaddrOf(request.address, request.port, &address);
  OutsideConnect started = StartOutsideConnect(address, -1, ports_);
  if (started.err == 0) return resolver_->SendConnectResult(request.tag, 0, started.socket.get());
  if (started.err != EINPROGRESS) return resolver_->SendConnectResult(request.tag, started.err);
  Parked parked{0, std::move(started.socket), address, SOCK_STREAM};
  parked.proxy_tag = request.tag;
  if (!Park(std::move(parked))) return resolver_->SendConnectResult(request.tag, EAGAIN);
  ++proxy_connects_;
}

void ConnectBroker::ProxyConnectByName(const net::ConnectRequest& request) {
  // By name alone (decision 0053): only through a parent proxy that is not this host, for a
  // host name the rules allow on this port, that no no_proxy entry names, and that the host's
  // DNS has no answer for (the broker's own reading of the replies, exec/host_answers.h: a name
  // whose answer held only internal addresses was answered, and the parent must not resolve it
  // past that filter) — and only when the user opted in (parent_proxy_by_name), since the
  // parent then resolves the name where cordon cannot see the address. Else no address: 502.
  const bool eligible = rules_.parent && !parent_own_host_ && net::IsHostName(request.name) &&
                        !rules_.parent->Bypasses(request.name, net::IpAddress{}) &&
                        rules_.domains->ForConnect(request.name, request.port).allowed &&
                        resolver_->HostHadNoAnswer(request.name);
  if (!eligible) return resolver_->SendConnectResult(request.tag, EHOSTUNREACH);
  const std::string target = fmt::format("{}:{}", request.name, request.port);
  if (!rules_.parent->by_name) {
    Record({"connect", target, "network",
            fmt::format("sandbox.parent_proxy_by_name: false (the host's DNS has no address for "
                        "{}, and cordon asks the parent proxy {} only for addresses it checked)",
                        request.name, rules_.parent->Address()),
            "if this network resolves names only at its proxy, set "
            "sandbox.parent_proxy_by_name to true in your config (the parent proxy then "
            "resolves the name, and cordon cannot check that it does not lead to an internal "
            "address)"});
    return resolver_->SendConnectResult(request.tag, EHOSTUNREACH);
  }
  if (proxy_connects_ >= kMaxProxyConnects) {
    return resolver_->SendConnectResult(request.tag, EAGAIN);
  }
  ProxyTunnel(request.tag, target);
}

void ConnectBroker::ProxyTunnel(std::uint32_t tag, const std::string& target) {
  Parked parked{0, UniqueFd(), {}, SOCK_STREAM};
  parked.proxy_tag = tag;
  if (const int err = ParkTunnel(std::move(parked), target, -1); err != 0) {
    return resolver_->SendConnectResult(tag, err);
  }
  ++proxy_connects_;
}

std::optional<Denial> ConnectBroker::RefuseOutside(const net::IpAddress& ip, std::uint16_t port) {
  const net::DomainRules& rules = *rules_.domains;
  // An address rule decides first (a listed literal, or a denied one); else the names the
  // resolver handed this address out for, any of which may allow this port.
  const std::array<std::uint8_t, 16> bytes = net::MappedBytes(ip);
  in6_addr mapped{};
  std::memcpy(mapped.s6_addr, bytes.data(), bytes.size());
  net::Decision decision = rules.ForAddress(mapped, port);
  std::string name;
  // An internal address (one the resolver hands out only because it is listed itself) is
  // decided by its own rule alone: a name's rule without a port must not open its other ports.
  if (!decision.allowed && decision.rule.empty() && resolver_ && !resolver_->Internal(ip)) {
    // Several names may share the address (a CDN): one that allows the port lets it through,
    // unless another one's deny rule names it, which wins.
    for (const std::string& candidate : resolver_->HandedOut(ip)) {
      net::Decision d = rules.ForConnect(candidate, port);
      const bool denied = !d.allowed && !d.rule.empty();
      const bool current_denied = !decision.allowed && !decision.rule.empty();
      if (name.empty() || denied || (d.allowed && !current_denied)) {
        decision = std::move(d);
        name = candidate;
      }
      if (denied) break;
    }
  }
  const std::string target = fmt::format("{}:{}", net::Bracketed(ip), port);
  if (!decision.allowed) {
    std::string rule;
    std::string fix;
    if (!decision.rule.empty()) {
      rule = "sandbox.domains.deny: " + decision.rule;
      fix = "by your configuration: remove " + decision.rule + " from sandbox.domains.deny";
    } else if (!name.empty()) {
      rule = fmt::format("sandbox.network: domains ({} is not allowed on port {})", name, port);
      fix = fmt::format("allow that port: cordon run --allow-domain {}:{}", name, port);
    } else if (resolver_ && resolver_->Internal(ip)) {
      rule = fmt::format(
          "sandbox.network: domains (a {} address: only a rule listing the address itself, "
          "with this port or none, reaches it; a name's rule never does)",
          net::InternalKind(ip) != nullptr ? net::InternalKind(ip) : "host's own");
      fix = fmt::format("if you mean it, list it: cordon run --allow-domain {}", target);
    } else {
      rule = "sandbox.network: domains (an address no allowed name resolved to in this run)";
      fix = fmt::format(
          "connect by an allowed name (cordon's resolver hands out its addresses), or list "
          "the address: cordon run --allow-domain {}",
          target);
    }
    return Denial{"connect", name.empty() ? target : fmt::format("{} ({})", target, name),
                  "network", std::move(rule), std::move(fix)};
  }
  return std::nullopt;
}

int ConnectBroker::ConnectOutside(std::uint64_t id, pid_t tid, int target_fd, int theirs,
                                  const sockaddr_storage& address,
                                  const std::string& tunnel_target) {
  const int their_flags = ::fcntl(theirs, F_GETFL);
  if (their_flags < 0) return errno;
  const bool cloexec = CloseOnExec(tid, target_fd);
  // No room to wait for it: EINTR before anything is sent (the command tries again).
  if (parked_.size() >= kMaxParked + kMaxWatched) return EINTR;
  if (!tunnel_target.empty()) {
    // Through the parent proxy: answered once the tunnel is open (TunnelStep, FinishParked).
    Parked parked{id, UniqueFd(), {}, SOCK_STREAM};
    parked.install_fd = target_fd;
    parked.cloexec = cloexec;
    parked.their_flags = their_flags;
    const int err = ParkTunnel(std::move(parked), tunnel_target, theirs);
    return err == 0 ? -1 : err;
  }
  // In the supervisor's network namespace (the host's), never blocking the supervisor.
  OutsideConnect started = StartOutsideConnect(address, theirs, ports_);
  const int err = started.err;
  if (err != 0 && err != EINPROGRESS) return err;  // the host network's own answer
  Parked parked{id, std::move(started.socket), address, SOCK_STREAM};
  parked.install_fd = target_fd;
  parked.cloexec = cloexec;
  parked.their_flags = their_flags;
  if (err == 0) return HandOver(parked);
  // Only a socket the kernel holds as connected is put in place (HandOver): a non-blocking
  // connect is answered once it is done too, as a blocking one is.
  return Park(std::move(parked)) ? -1 : EINTR;
}

int ConnectBroker::HoldConnected(int socket, const sockaddr_storage& address) {
  // connect() again on a connection that is made: 0 (or EISCONN once it is), and from now on
  // the kernel holds the socket as connected (SS_CONNECTED) for good. One still connecting, or
  // refused while it was, could be disconnected by shutdown() or connected anew by a fast-open
  // sendto(): a free socket of the host's network in the command's (or the proxy's) hands.
  const unsigned len = address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::connect(socket, reinterpret_cast<const sockaddr*>(&address), len) != 0 &&
      errno != EISCONN) {
    return errno;
  }
  return 0;
}

int ConnectBroker::HandOver(const Parked& parked) {
  const int socket = parked.socket.get();
  if (const int err = HoldConnected(socket, parked.address); err != 0) return err;
  // Blocking or not, as the command's socket was.
  if (::fcntl(socket, F_SETFL, parked.their_flags) != 0) return errno;
  struct stat st {};
  if (::fstat(socket, &st) != 0) return errno;
  outside_.insert(st.st_ino);
  if (!Install(parked.id, socket, parked.install_fd, parked.cloexec)) {
    return errno == ENOENT ? -1 : errno;  // ENOENT: nobody waits for the answer any more
  }
  return 0;
}

bool ConnectBroker::Install(std::uint64_t id, int socket, int target_fd, bool cloexec) {
  seccomp_notif_addfd addfd{};
  addfd.id = id;
  addfd.flags = SECCOMP_ADDFD_FLAG_SETFD;
  addfd.srcfd = static_cast<std::uint32_t>(socket);
  addfd.newfd = static_cast<std::uint32_t>(target_fd);
  addfd.newfd_flags = cloexec ? O_CLOEXEC : 0;
  return ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) >= 0;
}

}  // namespace cordon::exec
