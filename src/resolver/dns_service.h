// The sandbox's resolver with network by domain (docs/network-domains.md), as cordon-resolver
// runs it (resolver_main.cc). The sandbox's resolv.conf names 127.0.0.1, where the command's
// own process bound a UDP socket before it dropped its capabilities and handed it to the
// supervisor (no command can bind port 53), which gave it to cordon-resolver, with a listening
// TCP socket bound the same way (stream_clients.h). It answers there:
//
//   - a name sandbox.domains does not allow: NXDOMAIN at once, reported (Reports::refused;
//     never the 5 s timeouts and retries a resolver meets when nothing answers);
//   - an allowed name: a question for the host's resolver (Reports::query), which the broker
//     asks and whose reply comes back through OnReply; it goes to the client with its A/AAAA
//     records filtered: an address that is internal (loopback, private, link-local, the host's
//     own; net/address_class.h) and not listed itself is removed and reported (withheld; DNS
//     rebinding). The addresses left in the answer for the name asked (or its CNAME chain) are
//     the ones the connect broker will connect to for that name: each is reported
//     (handed_out) before the answer goes back, so the broker knows it before the command can
//     use it. A reply with a TTL is kept (dns_cache.h) and the same question answered from
//     it while the TTL lasts, filtered and reported the same way.
//
// Not thread-safe; one per cordon-resolver process.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "core/unique_fd.h"
#include "net/address_class.h"
#include "net/domain_rules.h"
#include "resolver/dns_cache.h"
#include "resolver/dns_message.h"
#include "resolver/stream_clients.h"

namespace cordon::resolver {

class DnsService {
 public:
  struct Reports {
    // Ask the host's resolver `question` (its id unused); the reply comes to OnReply(tag).
    std::function<void(std::uint16_t tag, const DnsQuestion& question)> query;
    // Called before the answer that holds `address` goes back to the command.
    std::function<void(const net::IpAddress& address, const std::string& name)> handed_out;
    std::function<void(const std::string& name)> refused;
    std::function<void(const std::string& name, const net::IpAddress& address)> withheld;
  };
  // `sandbox_socket`: UDP, bound to the sandbox's 127.0.0.1:53; `stream_listener`: TCP,
  // listening there (invalid: none).
  // `now`: the cache's clock.
  [[nodiscard]] static Result<std::unique_ptr<DnsService>> Create(
      core::UniqueFd sandbox_socket, core::UniqueFd stream_listener, const net::DomainRules* rules,
      Reports reports, DnsCache::Clock now = &std::chrono::steady_clock::now);

  int sandbox_fd() const { return sandbox_.get(); }
  // Reads and answers what is queued on the sandbox's socket; never blocks.
  void OnSandboxReadable();
  // The TCP sockets to poll (StreamClients::AppendPollSet), and their readiness.
  void AppendStreamPollSet(std::vector<pollfd>& out) { streams_.AppendPollSet(out); }
  void OnStreamReady(int fd, short revents);
  // The host resolver's reply to query `tag` (its id is the tag), or empty: none (SERVFAIL).
  void OnReply(std::uint16_t tag, std::span<const std::uint8_t> reply);

  // The proxy's own lookup of `name` (record `type`, A or AAAA), asked and filtered as a
  // client's is: `done` gets the addresses left (each reported handed_out first), or none (not
  // allowed, no reply, nothing left). Called later (OnReply, AnswerLookups), never from within
  // Lookup.
  using LookupDone = std::function<void(std::vector<net::IpAddress> addresses)>;
  void Lookup(const std::string& name, std::uint16_t type, LookupDone done);
  // Answers the lookups decided without a reply to wait for: from the cache, or none (refused,
  // or forgotten past kMaxPending), and those their callers make meanwhile, up to kLookupRounds
  // deep. The main loop calls it after each round.
  void AnswerLookups();
  static constexpr int kLookupRounds = 8;

  // Questions waiting for the host's resolver; past it the one with the lowest tag is
  // forgotten (its client retries).
  static constexpr std::size_t kMaxPending = 256;

 private:
  // Where a query came from: a UDP address, or a TCP connection.
  struct Client {
    sockaddr_storage address{};
    socklen_t address_len = 0;
    StreamClients::Ref stream;
    LookupDone lookup;  // the proxy's own (Lookup)
  };
  struct Pending {
    DnsQuestion question;
    std::vector<std::uint8_t> query;  // the client's, for a SERVFAIL or truncated answer
    Client client;
  };
  DnsService(core::UniqueFd sandbox, core::UniqueFd stream_listener, const net::DomainRules* rules,
             Reports reports, DnsCache::Clock now);
  void Handle(std::span<const std::uint8_t> wire, const Client& from);
  void Ask(Pending pending);
  // `reply` (to `question`, asked with `upstream_id`) filtered, its handed-out and withheld
  // addresses reported, and kept by the cache unless it came from there (`cached`: that many
  // seconds ago); nullopt when it is not a reply to `question`.
  std::optional<FilteredReply> FilterAndReport(std::span<const std::uint8_t> reply,
                                               const DnsQuestion& question,
                                               std::uint16_t upstream_id,
                                               std::optional<std::uint32_t> cached);
  // `reply` (to `question`, asked with `upstream_id`) filtered, reported and sent to `to` (the
  // client's `query` for a truncated answer). `cached`: the reply came from the cache that many
  // seconds ago; nullopt: it has just come, and the cache keeps it. False when it is not a
  // reply to `question`.
  bool Deliver(std::span<const std::uint8_t> reply, const DnsQuestion& question,
               std::uint16_t upstream_id, std::optional<std::uint32_t> cached,
               std::span<const std::uint8_t> query, const Client& to);
  // The same for the proxy's lookup: the addresses left, reported; nullopt: not a reply to it.
  std::optional<std::vector<net::IpAddress>> Addresses(std::span<const std::uint8_t> reply,
                                                       const DnsQuestion& question,
                                                       std::uint16_t upstream_id,
                                                       std::optional<std::uint32_t> cached);
  void Answer(const std::vector<std::uint8_t>& wire, const Client& to);
  bool Keep(const net::IpAddress& address) const;

  core::UniqueFd sandbox_;
  StreamClients streams_;
  const net::DomainRules* rules_;
  Reports reports_;
  std::vector<net::IpAddress> host_addresses_;
  std::uint16_t next_tag_ = 0;
  std::map<std::uint16_t, Pending> pending_;  // by tag
  DnsCache cache_;
  // Lookups answered by AnswerLookups: from the cache, or none.
  std::vector<std::pair<LookupDone, std::vector<net::IpAddress>>> decided_;
};

}  // namespace cordon::resolver
