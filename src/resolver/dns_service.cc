#include "resolver/dns_service.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <span>
#include <utility>

#include "core/syscall_error.h"

namespace cordon::resolver {
namespace {

using core::UniqueFd;

constexpr std::size_t kMaxMessage = 4096;
constexpr std::uint16_t kClassIn = 1;

}  // namespace

Result<std::unique_ptr<DnsService>> DnsService::Create(UniqueFd sandbox_socket,
                                                       UniqueFd stream_listener,
                                                       const net::DomainRules* rules,
                                                       Reports reports, DnsCache::Clock now) {
  const int flags = ::fcntl(sandbox_socket.get(), F_GETFL);
  if (flags < 0 || ::fcntl(sandbox_socket.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return core::FailSyscall("fcntl", "the sandbox's resolver socket, O_NONBLOCK");
  }
  return std::unique_ptr<DnsService>(new DnsService(std::move(sandbox_socket),
                                                    std::move(stream_listener), rules,
                                                    std::move(reports), std::move(now)));
}

DnsService::DnsService(UniqueFd sandbox, UniqueFd stream_listener, const net::DomainRules* rules,
                       Reports reports, DnsCache::Clock now)
    : sandbox_(std::move(sandbox)),
      streams_(std::move(stream_listener)),
      rules_(rules),
      reports_(std::move(reports)),
      host_addresses_(net::HostAddresses()),
      cache_(std::move(now)) {}

void DnsService::Answer(const std::vector<std::uint8_t>& wire, const Client& to) {
  if (wire.empty()) return;
  if (to.stream.valid()) return streams_.Send(to.stream, wire);
  (void)::sendto(sandbox_.get(), wire.data(), wire.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&to.address), to.address_len);
}

bool DnsService::Keep(const net::IpAddress& address) const {
  if (!net::IsInternal(address, host_addresses_)) return true;
  // Listed itself (on any port): the user named that address, so it is meant.
  const std::array<std::uint8_t, 16> bytes = net::MappedBytes(address);
  return std::any_of(rules_->allow().begin(), rules_->allow().end(),
                     [&](const net::DomainPattern& p) {
                       return p.kind == net::DomainPattern::Kind::kAddress && p.address == bytes;
                     });
}

void DnsService::OnSandboxReadable() {
  std::uint8_t buffer[kMaxMessage];
  for (int round = 0; round < 64; ++round) {
    Client from;
    from.address_len = sizeof from.address;
    const ssize_t n = ::recvfrom(sandbox_.get(), buffer, sizeof buffer, MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from.address), &from.address_len);
    if (n < 0) return;  // EAGAIN: all read
    Handle(std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)), from);
  }
}

void DnsService::OnStreamReady(int fd, short revents) {
  streams_.OnReady(fd, revents,
                   [this](std::span<const std::uint8_t> message, StreamClients::Ref stream) {
                     Client from;
                     from.stream = stream;
                     Handle(message, from);
                   });
}

void DnsService::Handle(std::span<const std::uint8_t> wire, const Client& from) {
  const std::optional<DnsQuestion> question = ParseQuery(wire);
  if (!question) return Answer(AnswerWithoutRecords(wire, kRcodeFormErr), from);
  if (question->qclass != kClassIn) return Answer(AnswerWithoutRecords(wire, kRcodeRefused), from);
  // A label with a dot or a byte outside host names in it (printed escaped by ldns) would
  // match patterns by its text, not by its labels: never a name the rules can allow.
  if (question->name.find('\\') != std::string::npos || !rules_->ForName(question->name).allowed) {
    reports_.refused(question->name);
    return Answer(AnswerWithoutRecords(wire, kRcodeNxDomain), from);
  }
  if (const std::optional<DnsCache::Hit> hit = cache_.Find(question->name, question->type);
      hit && Deliver(hit->reply, *question, hit->upstream_id, hit->age, wire, from)) {
    return;
  }
  Ask(Pending{*question, std::vector<std::uint8_t>(wire.begin(), wire.end()), from});
}

void DnsService::Ask(Pending pending) {
  std::uint16_t tag = next_tag_++;
  while (pending_.contains(tag)) tag = next_tag_++;
  if (pending_.size() >= kMaxPending) {
    if (pending_.begin()->second.client.lookup) {
      decided_.emplace_back(std::move(pending_.begin()->second.client.lookup),
                            std::vector<net::IpAddress>{});
    }
    pending_.erase(pending_.begin());
  }
  const DnsQuestion question = pending.question;
  pending_[tag] = std::move(pending);
  reports_.query(tag, question);
}

void DnsService::AnswerLookups() {
  // A caller's `done` may look up again (the proxy asks for AAAA when A gave nothing), and a
  // cached answer to that is decided at once: answered in this call too, not a poll later.
  for (int round = 0; round < kLookupRounds && !decided_.empty(); ++round) {
    for (auto& [done, addresses] : std::exchange(decided_, {})) done(std::move(addresses));
  }
}

void DnsService::Lookup(const std::string& name, std::uint16_t type, LookupDone done) {
  if (name.find('\\') != std::string::npos || !rules_->ForName(name).allowed) {
    decided_.emplace_back(std::move(done), std::vector<net::IpAddress>{});
    return;
  }
  DnsQuestion question;
  question.name = name;
  question.type = type;
  question.qclass = kClassIn;
  if (const std::optional<DnsCache::Hit> hit = cache_.Find(name, type)) {
    if (std::optional<std::vector<net::IpAddress>> addresses =
            Addresses(hit->reply, question, hit->upstream_id, hit->age)) {
      decided_.emplace_back(std::move(done), *std::move(addresses));
      return;
    }
  }
  Client client;
  client.lookup = std::move(done);
  Ask(Pending{std::move(question), {}, std::move(client)});
}

std::optional<FilteredReply> DnsService::FilterAndReport(std::span<const std::uint8_t> reply,
                                                         const DnsQuestion& question,
                                                         std::uint16_t upstream_id,
                                                         std::optional<std::uint32_t> cached) {
  std::optional<FilteredReply> filtered = FilterReply(
      reply, question, upstream_id, question.id,
      [this](const net::IpAddress& a) { return Keep(a); }, cached.value_or(0));
  if (!filtered) return std::nullopt;
  for (const net::IpAddress& a : filtered->handed_out) reports_.handed_out(a, question.name);
  for (const net::IpAddress& a : filtered->dropped) reports_.withheld(question.name, a);
  if (!cached) cache_.Store(question.name, question.type, reply, upstream_id, filtered->cache_ttl);
  return filtered;
}

bool DnsService::Deliver(std::span<const std::uint8_t> reply, const DnsQuestion& question,
                         std::uint16_t upstream_id, std::optional<std::uint32_t> cached,
                         std::span<const std::uint8_t> query, const Client& to) {
  const std::optional<FilteredReply> filtered =
      FilterAndReport(reply, question, upstream_id, cached);
  if (!filtered) return false;
  // Larger than the client takes over UDP: it asks again over TCP (RFC 1035, 4.2.1).
  if (!to.stream.valid() && filtered->wire.size() > question.udp_size) {
    Answer(AnswerWithoutRecords(query, kRcodeNoError, /*truncated=*/true), to);
  } else {
    Answer(filtered->wire, to);
  }
  return true;
}

std::optional<std::vector<net::IpAddress>> DnsService::Addresses(
    std::span<const std::uint8_t> reply, const DnsQuestion& question, std::uint16_t upstream_id,
    std::optional<std::uint32_t> cached) {
  std::optional<FilteredReply> filtered = FilterAndReport(reply, question, upstream_id, cached);
  if (!filtered) return std::nullopt;
  return std::move(filtered->handed_out);
}

void DnsService::OnReply(std::uint16_t tag, std::span<const std::uint8_t> reply) {
  const auto it = pending_.find(tag);
  if (it == pending_.end()) return;
  Pending& pending = it->second;
  if (pending.client.lookup) {
    std::vector<net::IpAddress> addresses;
    if (!reply.empty()) {
      std::optional<std::vector<net::IpAddress>> left =
          Addresses(reply, pending.question, tag, std::nullopt);
      if (!left) return;  // not the reply to it: keep waiting
      addresses = *std::move(left);
    }
    // Out of the table before the caller runs: it may ask again.
    LookupDone done = std::move(pending.client.lookup);
    pending_.erase(it);
    done(std::move(addresses));
    return;
  }
  if (reply.empty()) {
    Answer(AnswerWithoutRecords(pending.query, kRcodeServFail), pending.client);
  } else if (!Deliver(reply, pending.question, tag, std::nullopt, pending.query, pending.client)) {
    return;  // not the reply to it: keep waiting
  }
  pending_.erase(it);
}

}  // namespace cordon::resolver
