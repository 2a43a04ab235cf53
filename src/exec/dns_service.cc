#include "exec/dns_service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <utility>

#include "core/syscall_error.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

// Queries in flight upstream at once; past it the oldest is forgotten (its client retries).
constexpr std::size_t kMaxPending = 256;
constexpr std::size_t kMaxMessage = 4096;
constexpr std::uint16_t kClassIn = 1;

constexpr const char* kDomainFix =
    "allow it for this command: cordon run --allow-domain {name}, or add it to "
    "sandbox.domains.allow in your config";

}  // namespace

sockaddr_storage DnsService::HostResolver() {
  sockaddr_storage out{};
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  in->sin_family = AF_INET;
  in->sin_port = htons(53);
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::ifstream file("/etc/resolv.conf");
  for (std::string line; std::getline(file, line);) {
    std::istringstream words(line);
    std::string key;
    std::string value;
    if (!(words >> key >> value) || key != "nameserver") continue;
    if (const std::size_t percent = value.find('%'); percent != std::string::npos) {
      value.resize(percent);  // a scope id: link-local resolvers are not followed
    }
    sockaddr_storage parsed{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&parsed);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&parsed);
    if (::inet_pton(AF_INET, value.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(53);
      return parsed;
    }
    if (::inet_pton(AF_INET6, value.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(53);
      return parsed;
    }
  }
  return out;
}

Result<std::unique_ptr<DnsService>> DnsService::Create(UniqueFd sandbox_socket,
                                                       const net::DomainRules* rules,
                                                       sockaddr_storage upstream, Recorder record) {
  const int family = upstream.ss_family;
  UniqueFd up(::socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!up) return core::FailSyscall("socket", "the resolver's upstream UDP socket");
  const socklen_t len = family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  // Connected: only the host resolver's replies are read.
  std::string problem;
  if (::connect(up.get(), reinterpret_cast<const sockaddr*>(&upstream), len) != 0) {
    problem = fmt::format(
        "connect to the host's resolver (the first nameserver of "
        "/etc/resolv.conf) failed: {}",
        std::strerror(errno));
    up.Reset();
  }
  const int flags = ::fcntl(sandbox_socket.get(), F_GETFL);
  if (flags < 0 || ::fcntl(sandbox_socket.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return core::FailSyscall("fcntl", "the sandbox's resolver socket, O_NONBLOCK");
  }
  return std::unique_ptr<DnsService>(new DnsService(std::move(sandbox_socket), std::move(up),
                                                    std::move(problem), rules, std::move(record)));
}

DnsService::DnsService(UniqueFd sandbox, UniqueFd upstream, std::string upstream_problem,
                       const net::DomainRules* rules, Recorder record)
    : sandbox_(std::move(sandbox)),
      upstream_(std::move(upstream)),
      upstream_problem_(std::move(upstream_problem)),
      rules_(rules),
      record_(std::move(record)),
      host_addresses_(net::HostAddresses()) {}

void DnsService::Refuse(std::span<const std::uint8_t> wire, const net::DnsQuestion& question,
                        const sockaddr_storage& from, socklen_t from_len, std::string rule,
                        std::string fix) {
  record_({"dns", question.name, "network", std::move(rule), std::move(fix)});
  Answer(net::AnswerWithoutRecords(wire, net::kRcodeNxDomain), from, from_len);
}

bool DnsService::Internal(const net::IpAddress& address) const {
  return net::InternalKind(address) != nullptr ||
         std::find(host_addresses_.begin(), host_addresses_.end(), address) !=
             host_addresses_.end();
}

void DnsService::Answer(const std::vector<std::uint8_t>& wire, const sockaddr_storage& to,
                        socklen_t len) {
  if (wire.empty()) return;
  (void)::sendto(sandbox_.get(), wire.data(), wire.size(), MSG_DONTWAIT,
                 reinterpret_cast<const sockaddr*>(&to), len);
}

bool DnsService::Keep(const net::IpAddress& address) const {
  if (!Internal(address)) return true;
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
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const ssize_t n = ::recvfrom(sandbox_.get(), buffer, sizeof buffer, MSG_DONTWAIT,
                                 reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) return;  // EAGAIN: all read
    const std::span<const std::uint8_t> wire(buffer, static_cast<std::size_t>(n));
    const std::optional<net::DnsQuestion> question = net::ParseQuery(wire);
    if (!question) {
      Answer(net::AnswerWithoutRecords(wire, net::kRcodeFormErr), from, from_len);
      continue;
    }
    if (question->qclass != kClassIn) {
      Answer(net::AnswerWithoutRecords(wire, net::kRcodeRefused), from, from_len);
      continue;
    }
    // A label with a dot or a byte outside host names in it (printed escaped by ldns) would
    // match patterns by its text, not by its labels: never a name the rules can allow.
    if (question->name.find('\\') != std::string::npos) {
      Refuse(wire, *question, from, from_len,
             "sandbox.network: domains (a name with characters host names do not have)",
             "by design: only host names (letters, digits, '-', '_') are looked up");
      continue;
    }
    const net::Decision decision = rules_->ForName(question->name);
    if (!decision.allowed) {
      if (decision.rule.empty()) {
        Refuse(wire, *question, from, from_len,
               "sandbox.network: domains (not in sandbox.domains.allow)",
               fmt::format(kDomainFix, fmt::arg("name", question->name)));
      } else {
        Refuse(wire, *question, from, from_len, "sandbox.domains.deny: " + decision.rule,
               "by your configuration: remove " + decision.rule + " from sandbox.domains.deny");
      }
      continue;
    }
    if (!upstream_) {
      record_({"dns", question->name, "network",
               "cordon's resolver has no upstream: " + upstream_problem_,
               "check the host's /etc/resolv.conf (its first nameserver must be reachable)"});
      Answer(net::AnswerWithoutRecords(wire, net::kRcodeServFail), from, from_len);
      continue;
    }
    // A random id for each query: one the host's other processes could guess would let them
    // spoof the reply (its source is checked by the connected socket).
    std::uint16_t id = 0;
    do {
      id = static_cast<std::uint16_t>(random_());
    } while (pending_.contains(id));
    const std::vector<std::uint8_t> query = net::QueryFor(*question, id);
    if (query.empty() || ::send(upstream_.get(), query.data(), query.size(), MSG_DONTWAIT) < 0) {
      Answer(net::AnswerWithoutRecords(wire, net::kRcodeServFail), from, from_len);
      continue;
    }
    if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());
    pending_[id] = Pending{*question, from, from_len};
  }
}

void DnsService::OnUpstreamReadable() {
  if (!upstream_) return;
  std::uint8_t buffer[kMaxMessage];
  for (int round = 0; round < 64; ++round) {
    const ssize_t n = ::recv(upstream_.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0) return;
    if (n < 2) continue;
    const auto id = static_cast<std::uint16_t>((buffer[0] << 8) | buffer[1]);
    const auto it = pending_.find(id);
    if (it == pending_.end()) continue;
    const Pending& pending = it->second;
    std::optional<net::FilteredReply> reply = net::FilterReply(
        std::span<const std::uint8_t>(buffer, static_cast<std::size_t>(n)), pending.question, id,
        pending.question.id, [this](const net::IpAddress& a) { return Keep(a); });
    if (!reply) continue;  // not the reply to it: keep waiting
    for (const net::IpAddress& a : reply->kept) {
      auto entry = handed_out_.find(a);
      if (entry == handed_out_.end()) {
        if (handed_out_.size() >= kMaxAddresses) continue;
        entry = handed_out_.emplace(a, std::vector<std::string>{}).first;
      }
      std::vector<std::string>& names = entry->second;
      if (names.size() < kMaxNamesPerAddress &&
          std::find(names.begin(), names.end(), pending.question.name) == names.end()) {
        names.push_back(pending.question.name);
      }
    }
    for (const net::IpAddress& a : reply->dropped) {
      record_(
          {"dns", fmt::format("{} -> {}", pending.question.name, net::ToString(a)), "network",
           fmt::format("an allowed name resolving to a {} address (DNS rebinding)",
                       net::InternalKind(a) != nullptr ? net::InternalKind(a) : "host's own"),
           fmt::format("if you mean that address, allow it explicitly: cordon run "
                       "--allow-domain {}",
                       a.family == AF_INET6 ? "[" + net::ToString(a) + "]" : net::ToString(a))});
    }
    Answer(reply->wire, pending.client, pending.client_len);
    pending_.erase(it);
  }
}

const std::vector<std::string>& DnsService::HandedOut(const net::IpAddress& address) const {
  static const std::vector<std::string> kNone;
  const auto it = handed_out_.find(address);
  return it == handed_out_.end() ? kNone : it->second;
}

}  // namespace cordon::exec
