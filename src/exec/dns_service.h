// The sandbox's resolver with network by domain (docs/network-domains.md). The sandbox's
// resolv.conf names 127.0.0.1, where the command's own process bound a UDP socket before it
// dropped its capabilities and handed it to the supervisor (no command can bind port 53). The
// supervisor answers there:
//
//   - a name sandbox.domains does not allow: NXDOMAIN at once, recorded as a denial (never
//     the 5 s timeouts and retries a resolver meets when nothing answers);
//   - an allowed name: a fresh query (the question alone, never the command's bytes) to the
//     host's resolver, whose reply goes back with its A/AAAA records filtered: an address that
//     is internal (loopback, private, link-local, the host's own; net/address_class.h) and not
//     listed itself is dropped and recorded (DNS rebinding). The addresses left are the ones
//     the connect broker will connect to for that name (HandedOut).
//
// Not thread-safe; owned by the run's ConnectBroker, whose epoll set holds both sockets.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"
#include "core/unique_fd.h"
#include "net/address_class.h"
#include "net/dns_message.h"
#include "net/domain_rules.h"

namespace cordon::exec {

class DnsService {
 public:
  using Recorder = std::function<void(Denial)>;
  // `sandbox_socket`: UDP, bound to the sandbox's 127.0.0.1:53. `upstream`: the host's resolver.
  // An upstream that cannot be reached (an address without a route) is not an error: allowed
  // names are then answered SERVFAIL, and recorded with the reason.
  [[nodiscard]] static Result<std::unique_ptr<DnsService>> Create(core::UniqueFd sandbox_socket,
                                                                  const net::DomainRules* rules,
                                                                  sockaddr_storage upstream,
                                                                  Recorder record);

  int sandbox_fd() const { return sandbox_.get(); }
  int upstream_fd() const { return upstream_.get(); }
  // Reads and answers what is queued on either socket; never blocks.
  void OnSandboxReadable();
  void OnUpstreamReadable();

  // The allowed names `address` was handed out for in this run (empty: none). At most
  // kMaxNamesPerAddress names for each of at most kMaxAddresses addresses are kept: past that
  // an address is not handed out (its connects are refused), which bounds the supervisor's
  // memory against a zone that answers every name.
  static constexpr std::size_t kMaxNamesPerAddress = 16;
  static constexpr std::size_t kMaxAddresses = 4096;
  const std::vector<std::string>& HandedOut(const net::IpAddress& address) const;
  // Internal (net::InternalKind) or one of the host's own addresses: handed out only when the
  // address is listed itself, and connected to only by that address's own rule.
  bool Internal(const net::IpAddress& address) const;

  // The host's resolver: the first `nameserver` of /etc/resolv.conf (the one glibc asks
  // first), else 127.0.0.1:53 as glibc does without one.
  static sockaddr_storage HostResolver();

 private:
  struct Pending {
    net::DnsQuestion question;
    sockaddr_storage client{};
    socklen_t client_len = 0;
  };
  DnsService(core::UniqueFd sandbox, core::UniqueFd upstream, std::string upstream_problem,
             const net::DomainRules* rules, Recorder record);
  void Refuse(std::span<const std::uint8_t> wire, const net::DnsQuestion& question,
              const sockaddr_storage& from, socklen_t from_len, std::string rule, std::string fix);
  void Answer(const std::vector<std::uint8_t>& wire, const sockaddr_storage& to, socklen_t len);
  bool Keep(const net::IpAddress& address) const;

  core::UniqueFd sandbox_;
  core::UniqueFd upstream_;  // invalid: none (upstream_problem_ says why)
  std::string upstream_problem_;
  const net::DomainRules* rules_;
  Recorder record_;
  std::vector<net::IpAddress> host_addresses_;
  std::mt19937 random_{std::random_device{}()};  // upstream query ids
  std::map<std::uint16_t, Pending> pending_;     // by the id of the upstream query
  std::map<net::IpAddress, std::vector<std::string>> handed_out_;
};

}  // namespace cordon::exec
