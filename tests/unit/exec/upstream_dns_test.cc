// The broker's side of the resolver's lookups: the queries it makes for the host's resolver,
// and the denials it writes from the resolver's reports.
#include "exec/upstream_dns.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exec/dns_denials.h"
#include "support/loopback_udp.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;
using test_support::BoundUdp;
using test_support::Readable;

TEST(UpstreamDnsTest, QueryHoldsTheQuestionAloneWithRecursionDesired) {
  const std::vector<std::uint8_t> q = EncodeQuery("pkg.example.test", 28, 1, 0xabcd);
  // clang-format off
  const std::vector<std::uint8_t> expected = {
      0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1,  // id, RD, one question, one EDNS record
      3, 'p', 'k', 'g', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 4, 't', 'e', 's', 't', 0,
      0, 28, 0, 1,                                     // AAAA, IN
      0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0};         // OPT: the root, 1232 bytes, no options
  // clang-format on
  EXPECT_EQ(q, expected);
}

TEST(UpstreamDnsTest, NamesThatAreNoHostNamesAreNotEncoded) {
  EXPECT_FALSE(EncodeQuery("a_b-c.test", 1, 1, 1).empty());  // the twin of the refusals below
  for (const std::string& bad :
       {std::string(), std::string("a..test"), std::string(".test"), std::string("test."),
        std::string("a\\.b.test"), std::string("A.test"), std::string("a b.test"),
        std::string(64, 'a') + ".test", std::string(250, 'a') + ".test"}) {
    EXPECT_TRUE(EncodeQuery(bad, 1, 1, 1).empty()) << bad;
  }
}

// A stand-in for the host's resolver: UDP and TCP on one loopback port.
struct StandIn {
  sockaddr_in address{};
  UniqueFd udp;
  UniqueFd tcp;
  StandIn() {
    for (int attempt = 0; attempt < 20 && !tcp; ++attempt) {
      udp = BoundUdp(&address);
      UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
          ::listen(listener.get(), 4) == 0) {
        tcp = std::move(listener);
      }
    }
  }
  sockaddr_storage Storage() const {
    sockaddr_storage out{};
    std::memcpy(&out, &address, sizeof address);
    return out;
  }
  // The query that came over UDP, and where to answer it.
  std::vector<std::uint8_t> ReadQuery(sockaddr_in* from) {
    EXPECT_TRUE(Readable(udp.get(), 5000)) << "nothing was asked";
    std::vector<std::uint8_t> q(512);
    socklen_t len = sizeof *from;
    const ssize_t n =
        ::recvfrom(udp.get(), q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(from), &len);
    q.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return q;
  }
};

// The reply to `query`: QR set (and TC when `truncated`); with one A record unless truncated.
std::vector<std::uint8_t> Reply(std::vector<std::uint8_t> query, bool truncated) {
  query[2] |= truncated ? 0x82 : 0x80;
  if (truncated) return query;
  query[7] = 1;
  const std::uint8_t record[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 7};
  query.insert(query.end(), std::begin(record), std::end(record));
  return query;
}

// Serves `upstream` until `done` or 5 s pass.
void ServeUntil(UpstreamDns& upstream, const UpstreamDns::OnReply& on_reply,
                const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < until) {
    (void)Readable(upstream.fd(), 50);
    upstream.OnReadable(on_reply);
  }
}

TEST(UpstreamDnsTest, ATruncatedReplyIsAskedAgainOverTcp) {
  StandIn host;
  ASSERT_TRUE(host.tcp) << "no port free for both UDP and TCP";
  UpstreamDns upstream(host.Storage());
  ASSERT_GE(upstream.fd(), 0) << upstream.problem();
  ASSERT_TRUE(upstream.Ask(7, "pkg.test", 1, 1));
  sockaddr_in from{};
  const std::vector<std::uint8_t> query = host.ReadQuery(&from);
  ASSERT_GE(query.size(), 12u);
  const std::vector<std::uint8_t> truncated = Reply(query, true);
  ASSERT_GT(::sendto(host.udp.get(), truncated.data(), truncated.size(), 0,
                     reinterpret_cast<sockaddr*>(&from), sizeof from),
            0);
  std::vector<std::pair<std::uint16_t, std::vector<std::uint8_t>>> replies;
  const auto collect = [&](std::uint16_t tag, std::span<const std::uint8_t> reply) {
    replies.emplace_back(tag, std::vector<std::uint8_t>(reply.begin(), reply.end()));
  };
  // The same query, length first, comes over TCP; the whole reply goes back there.
  ServeUntil(upstream, collect, [&] { return Readable(host.tcp.get(), 0); });
  ASSERT_TRUE(replies.empty()) << "the truncated reply was passed on";
  UniqueFd stream(::accept4(host.tcp.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(stream);
  ServeUntil(upstream, collect, [&] { return Readable(stream.get(), 0); });
  std::uint8_t in[514];
  const ssize_t n = ::recv(stream.get(), in, sizeof in, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(2 + query.size()));
  EXPECT_EQ((in[0] << 8) | in[1], static_cast<int>(query.size()));
  EXPECT_EQ(std::vector<std::uint8_t>(in + 2, in + n), query);
  std::vector<std::uint8_t> whole = Reply(query, false);
  whole.insert(whole.begin(), {0, static_cast<std::uint8_t>(whole.size())});
  ASSERT_EQ(::send(stream.get(), whole.data(), whole.size(), 0),
            static_cast<ssize_t>(whole.size()));
  ServeUntil(upstream, collect, [&] { return !replies.empty(); });
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].first, 7);
  EXPECT_EQ(replies[0].second, std::vector<std::uint8_t>(whole.begin() + 2, whole.end()));
}

TEST(UpstreamDnsTest, AWholeReplyOverUdpIsPassedOnAndAFailedStreamIsNoReply) {
  StandIn host;
  ASSERT_TRUE(host.tcp) << "no port free for both UDP and TCP";
  UpstreamDns upstream(host.Storage());
  ASSERT_GE(upstream.fd(), 0) << upstream.problem();
  std::vector<std::pair<std::uint16_t, std::size_t>> replies;
  const auto collect = [&](std::uint16_t tag, std::span<const std::uint8_t> reply) {
    replies.emplace_back(tag, reply.size());
  };
  // Not truncated: passed on as it came, no stream opened.
  ASSERT_TRUE(upstream.Ask(8, "pkg.test", 1, 1));
  sockaddr_in from{};
  std::vector<std::uint8_t> query = host.ReadQuery(&from);
  const std::vector<std::uint8_t> whole = Reply(query, false);
  ASSERT_GT(::sendto(host.udp.get(), whole.data(), whole.size(), 0,
                     reinterpret_cast<sockaddr*>(&from), sizeof from),
            0);
  ServeUntil(upstream, collect, [&] { return !replies.empty(); });
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0], (std::pair<std::uint16_t, std::size_t>{8, whole.size()}));
  EXPECT_FALSE(Readable(host.tcp.get(), 0)) << "a stream was opened for a whole reply";
  // Truncated, and the stream closed before any reply: no reply (the client gets SERVFAIL).
  ASSERT_TRUE(upstream.Ask(9, "pkg.test", 1, 1));
  query = host.ReadQuery(&from);
  const std::vector<std::uint8_t> truncated = Reply(query, true);
  ASSERT_GT(::sendto(host.udp.get(), truncated.data(), truncated.size(), 0,
                     reinterpret_cast<sockaddr*>(&from), sizeof from),
            0);
  ServeUntil(upstream, collect, [&] { return Readable(host.tcp.get(), 0); });
  UniqueFd stream(::accept4(host.tcp.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(stream);
  stream.Reset();
  ServeUntil(upstream, collect, [&] { return replies.size() == 2; });
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1], (std::pair<std::uint16_t, std::size_t>{9, 0}));
}

TEST(DnsDenialsTest, ARefusalTheRulesContradictIsDropped) {
  const Result<net::DomainRules> rules =
      net::DomainRules::Parse({"*.pkg.test"}, {"secret.pkg.test"});
  ASSERT_TRUE(rules);
  EXPECT_FALSE(RefusedLookup(*rules, "mirror.pkg.test"));
  const std::optional<Denial> other = RefusedLookup(*rules, "other.test");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->rule, "sandbox.network: domains (not in sandbox.domains.allow)");
  EXPECT_NE(other->fix.find("--allow-domain other.test"), std::string::npos);
  const std::optional<Denial> denied = RefusedLookup(*rules, "secret.pkg.test");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->rule, "sandbox.domains.deny: secret.pkg.test");
  // Escaped bytes: refused by design, whatever the rules say of the text.
  const std::optional<Denial> escaped = RefusedLookup(*rules, "a\\.pkg.test");
  ASSERT_TRUE(escaped);
  EXPECT_NE(escaped->rule.find("characters host names do not have"), std::string::npos);
  const std::optional<Denial> long_name = RefusedLookup(*rules, std::string(600, '\\'));
  ASSERT_TRUE(long_name);
  EXPECT_EQ(long_name->target.size(), kMaxDeniedName);
}

}  // namespace
}  // namespace cordon::exec
