// The run's resolver process as the broker holds it, with the real cordon-resolver and with a
// stand-in that forges reports (forging_resolver.cc), against a stand-in for the host's
// resolver on the loopback: what the resolver is given, which of its questions are asked and
// which of its claims are believed, and that it stops with its holder.
#include "exec/resolver_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/loopback_udp.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

net::DomainRules Rules(const std::vector<std::string>& allow) {
  Result<net::DomainRules> rules = net::DomainRules::Parse(allow, {});
  EXPECT_TRUE(rules);
  return rules ? *rules : net::DomainRules();
}

UniqueFd Program(const char* path) { return UniqueFd(::open(path, O_PATH | O_CLOEXEC)); }

using test_support::BoundUdp;
using test_support::Readable;

// The stand-in for the host's resolver, and a client of the sandbox's socket.
struct Loopback {
  sockaddr_in sandbox_address{};
  UniqueFd sandbox = BoundUdp(&sandbox_address);
  sockaddr_in upstream_address{};
  UniqueFd upstream = BoundUdp(&upstream_address);
  UniqueFd client{::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  UniqueFd listener{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  UniqueFd proxy{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};

  Loopback() {
    EXPECT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&sandbox_address),
                        sizeof sandbox_address),
              0);
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
    EXPECT_EQ(::listen(listener.get(), 4), 0);
    EXPECT_EQ(::bind(proxy.get(), reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
    EXPECT_EQ(::listen(proxy.get(), 4), 0);
  }
  // What the broker is handed for `program`.
  ResolverHandover Handover(int program) {
    return ResolverHandover{std::move(sandbox), std::move(listener), std::move(proxy), program};
  }
  sockaddr_storage Upstream() const {
    sockaddr_storage out{};
    std::memcpy(&out, &upstream_address, sizeof upstream_address);
    return out;
  }
  std::string ClientReads() {
    if (!Readable(client.get(), 10000)) return "(nothing)";
    char buffer[512];
    const ssize_t n = ::recv(client.get(), buffer, sizeof buffer, 0);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "(error)";
  }
};

// Serves `resolver` (its channel and upstream socket, as the broker's loop does) until `done`
// holds, or 10 s pass; the denials recorded meanwhile.
std::vector<Denial> ServeUntil(ResolverProcess& resolver,
                               const std::function<bool(const std::vector<Denial>&)>& done,
                               std::vector<net::ConnectRequest>* connects = nullptr) {
  std::vector<Denial> denials;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done(denials) && std::chrono::steady_clock::now() < until) {
    pollfd p[2] = {{resolver.channel_fd(), POLLIN, 0}, {resolver.upstream_fd(), POLLIN, 0}};
    (void)::poll(p, 2, 50);
    resolver.Drain([&](Denial d) { denials.push_back(std::move(d)); },
                   [&](const net::ConnectRequest& request) {
                     if (connects != nullptr) connects->push_back(request);
                   });
    resolver.OnUpstreamReadable();
  }
  return denials;
}

const Denial* Find(const std::vector<Denial>& denials, const std::string& target) {
  const auto it = std::find_if(denials.begin(), denials.end(),
                               [&](const Denial& d) { return d.target == target; });
  return it == denials.end() ? nullptr : &*it;
}

// A query the stand-in upstream received: its bytes, and where to answer.
struct Received {
  std::vector<std::uint8_t> bytes;
  sockaddr_storage from{};
  socklen_t from_len = sizeof from;
};

std::vector<Received> ReceivedQueries(int upstream) {
  std::vector<Received> out;
  while (Readable(upstream, 0)) {
    Received r;
    r.bytes.resize(512);
    const ssize_t n = ::recvfrom(upstream, r.bytes.data(), r.bytes.size(), 0,
                                 reinterpret_cast<sockaddr*>(&r.from), &r.from_len);
    if (n <= 0) break;
    r.bytes.resize(static_cast<std::size_t>(n));
    out.push_back(std::move(r));
  }
  return out;
}

bool Names(const Received& query, const std::string& wire_name) {
  return std::search(query.bytes.begin(), query.bytes.end(), wire_name.begin(), wire_name.end()) !=
         query.bytes.end();
}

// The broker's query without its EDNS record (the last 11 bytes): the header and question.
std::vector<std::uint8_t> WithoutEdns(const std::vector<std::uint8_t>& query) {
  EXPECT_GE(query.size(), 23u);
  EXPECT_EQ(query[11], 1) << "no EDNS record";
  std::vector<std::uint8_t> out(query.begin(), query.end() - 11);
  out[11] = 0;
  return out;
}

// The reply to `query`: QR and RA set, one A record for its name.
std::vector<std::uint8_t> ReplyWithA(const std::vector<std::uint8_t>& query,
                                     std::array<std::uint8_t, 4> address) {
  std::vector<std::uint8_t> reply = WithoutEdns(query);
  reply[2] |= 0x80;
  reply[3] |= 0x80;
  reply[7] = 1;  // one answer
  const std::uint8_t record[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
  reply.insert(reply.end(), std::begin(record), std::end(record));
  reply.insert(reply.end(), address.begin(), address.end());
  return reply;
}

// The reply to `query`: QR and RA set, NXDOMAIN, no records.
std::vector<std::uint8_t> NxDomain(const std::vector<std::uint8_t>& query) {
  std::vector<std::uint8_t> reply = WithoutEdns(query);
  reply[2] |= 0x80;
  reply[3] = static_cast<std::uint8_t>((reply[3] & 0xf0) | 0x80 | 3);
  return reply;
}

TEST(ResolverProcessTest, ForgedReportsAreCheckedAndItsStopIsRecorded) {
  const net::DomainRules rules = Rules({"pkg.test", "*.allowed.test"});
  UniqueFd program = Program(CORDON_FORGING_RESOLVER_PATH);
  ASSERT_TRUE(program);
  Loopback net;
  auto started = ResolverProcess::Start(net.Handover(program.get()), rules, net.Upstream());
  ASSERT_TRUE(started) << started.error().message;
  ResolverProcess& resolver = **started;

  // Given the rules as arguments, no environment, and only stdio, the socket, the channel and
  // its own program.
  ASSERT_EQ(::send(net.client.get(), "hello", 5, 0), 5);
  EXPECT_EQ(net.ClientReads(), "allow=pkg.test allow=*.allowed.test|0|0 1 2 3 4 5 6 7");

  // Its questions: only the allowed name's reaches the host's resolver, as a query of the
  // broker's making; the reply goes back under the resolver's tag.
  std::vector<Received> asked;
  std::vector<net::ConnectRequest> connects;
  std::vector<Denial> denials = ServeUntil(
      resolver,
      [&](const std::vector<Denial>&) {
        for (Received& r : ReceivedQueries(net.upstream.get())) asked.push_back(std::move(r));
        return asked.size() >= 8;
      },
      &connects);
  ASSERT_EQ(asked.size(), 8u);
  EXPECT_TRUE(Names(asked[0], std::string("\x03pkg\x04test\x00", 10)));
  // Before any reply, no name counts as one the host's DNS has no answer for.
  EXPECT_FALSE(resolver.HostHadNoAnswer("a.allowed.test"));
  const std::vector<std::uint8_t> reply = ReplyWithA(asked[0].bytes, {192, 0, 2, 7});
  ASSERT_GT(::sendto(net.upstream.get(), reply.data(), reply.size(), 0,
                     reinterpret_cast<sockaddr*>(&asked[0].from), asked[0].from_len),
            0);
  // d.allowed.test has an A record (its AAAA question gets NXDOMAIN); every other name none.
  const std::string d_wire(
      "\x01"
      "d\x07"
      "allowed\x04"
      "test\x00",
      15);
  for (std::size_t i = 1; i < asked.size(); ++i) {
    const bool d_a =
        Names(asked[i], d_wire) && asked[i].bytes[asked[i].bytes.size() - 14] == 1;  // type A
    const std::vector<std::uint8_t> answer =
        d_a ? ReplyWithA(asked[i].bytes, {10, 0, 0, 9}) : NxDomain(asked[i].bytes);
    ASSERT_GT(::sendto(net.upstream.get(), answer.data(), answer.size(), 0,
                       reinterpret_cast<sockaddr*>(&asked[i].from), asked[i].from_len),
              0);
  }
  const std::vector<Denial> more = ServeUntil(
      resolver, [](const std::vector<Denial>& d) { return Find(d, "cordon-resolver") != nullptr; },
      &connects);
  denials.insert(denials.end(), more.begin(), more.end());
  EXPECT_EQ(net.ClientReads(), "reply 7 " + std::to_string(reply.size()));
  EXPECT_TRUE(ReceivedQueries(net.upstream.get()).empty()) << "evil.test was asked";

  // What the host's DNS said, as the broker saw the replies: a name with an answer, one asked
  // one way only, one never asked, one not allowed are never "without an answer"; only the
  // name asked both ways and answered NXDOMAIN both times is.
  EXPECT_TRUE(resolver.HostHadNoAnswer("a.allowed.test"));
  EXPECT_FALSE(resolver.HostHadNoAnswer("pkg.test"));
  EXPECT_FALSE(resolver.HostHadNoAnswer("b.allowed.test"));
  EXPECT_FALSE(resolver.HostHadNoAnswer("x.allowed.test"));
  EXPECT_FALSE(resolver.HostHadNoAnswer("evil.test"));
  // Under one tag, each name gets its own replies: c none, d an (internal) record.
  EXPECT_TRUE(resolver.HostHadNoAnswer("c.allowed.test"));
  EXPECT_FALSE(resolver.HostHadNoAnswer("d.allowed.test"));
  // A name in another case was never asked (no query of the broker's carries it).
  EXPECT_FALSE(resolver.HostHadNoAnswer("E.allowed.test"));
  EXPECT_FALSE(resolver.HostHadNoAnswer("e.allowed.test"));

  // An allowed name's address is kept; a name the rules do not allow is not believed.
  EXPECT_EQ(resolver.HandedOut(*net::ParseAddress("192.0.2.7")),
            std::vector<std::string>{"pkg.test"});
  EXPECT_TRUE(resolver.HandedOut(*net::ParseAddress("192.0.2.8")).empty());
  // Refusals and withheld addresses only where the rules agree, in the broker's words.
  EXPECT_EQ(Find(denials, "pkg.test"), nullptr);
  ASSERT_NE(Find(denials, "other.test"), nullptr);
  EXPECT_EQ(Find(denials, "other.test")->rule,
            "sandbox.network: domains (not in sandbox.domains.allow)");
  EXPECT_EQ(Find(denials, "pkg.test -> 192.0.2.9"), nullptr);
  ASSERT_NE(Find(denials, "pkg.test -> 127.0.0.1"), nullptr);
  EXPECT_NE(Find(denials, "pkg.test -> 127.0.0.1")->rule.find("rebinding"), std::string::npos);
  EXPECT_EQ(Find(denials, "x"), nullptr);
  // A connect the proxy asks for goes to the broker's decision as it was asked (the broker
  // refuses an address no allowed name was handed out for: RefuseOutside).
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_EQ(connects[0],
            (net::ConnectRequest{5, *net::ParseAddress("203.0.113.9"), 80, "evil.test"}));
  // The proxy's refusals: only where the rules agree, and only of hosts, in the broker's words.
  EXPECT_EQ(Find(denials, "pkg.test:80"), nullptr);
  ASSERT_NE(Find(denials, "other.test:81"), nullptr);
  EXPECT_NE(Find(denials, "other.test:81")->fix.find("--allow-domain other.test,"),
            std::string::npos)
      << Find(denials, "other.test:81")->fix;
  EXPECT_EQ(Find(denials, "pkg.test:82"), nullptr);
  // Its exit is recorded with its status, once; the channel is closed.
  const Denial* stopped = Find(denials, "cordon-resolver");
  ASSERT_NE(stopped, nullptr);
  EXPECT_EQ(stopped->kind, "resolver");
  EXPECT_NE(stopped->rule.find("exit status 3"), std::string::npos) << stopped->rule;
  EXPECT_EQ(resolver.channel_fd(), -1);
  EXPECT_EQ(std::count_if(denials.begin(), denials.end(),
                          [](const Denial& d) { return d.kind == "resolver"; }),
            1);
}

// A query for `name` (type A, class IN) with id `id`, as the command's resolver library sends.
std::vector<std::uint8_t> Query(const std::string& name, std::uint16_t id) {
  std::vector<std::uint8_t> q = {static_cast<std::uint8_t>(id >> 8),
                                 static_cast<std::uint8_t>(id & 0xff),
                                 0x01,
                                 0x00,
                                 0,
                                 1,
                                 0,
                                 0,
                                 0,
                                 0,
                                 0,
                                 0};
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    q.push_back(static_cast<std::uint8_t>(dot - start));
    q.insert(q.end(), name.begin() + static_cast<long>(start),
             name.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  q.insert(q.end(), {0, 0, 1, 0, 1});
  return q;
}

TEST(ResolverProcessTest, RealResolverAnswersThroughTheBrokerAndIsGoneWithItsHolder) {
  const net::DomainRules rules = Rules({"pkg.test"});
  UniqueFd program = Program(CORDON_RESOLVER_PATH);
  ASSERT_TRUE(program);
  Loopback net;
  auto started = ResolverProcess::Start(net.Handover(program.get()), rules, net.Upstream());
  ASSERT_TRUE(started) << started.error().message;
  ResolverProcess& resolver = **started;
  const pid_t pid = resolver.pid();

  // A name not allowed: NXDOMAIN at once, recorded in the broker's words.
  std::vector<std::uint8_t> q = Query("other.test", 0x4242);
  ASSERT_EQ(::send(net.client.get(), q.data(), q.size(), 0), static_cast<ssize_t>(q.size()));
  const std::vector<Denial> denials = ServeUntil(resolver, [&](const std::vector<Denial>& d) {
    return Readable(net.client.get(), 0) && Find(d, "other.test") != nullptr;
  });
  std::uint8_t answer[512];
  ssize_t n = ::recv(net.client.get(), answer, sizeof answer, MSG_DONTWAIT);
  ASSERT_GE(n, 12) << "the resolver did not answer";
  EXPECT_EQ(answer[0], 0x42);
  EXPECT_EQ(answer[3] & 0x0f, 3);  // NXDOMAIN
  ASSERT_NE(Find(denials, "other.test"), nullptr);
  EXPECT_NE(Find(denials, "other.test")->fix.find("--allow-domain other.test"), std::string::npos);

  // An allowed name: asked of the host's resolver by the broker, its address handed out
  // before the answer comes back.
  q = Query("pkg.test", 0x4343);
  ASSERT_EQ(::send(net.client.get(), q.data(), q.size(), 0), static_cast<ssize_t>(q.size()));
  std::vector<Received> asked;
  (void)ServeUntil(resolver, [&](const std::vector<Denial>&) {
    for (Received& r : ReceivedQueries(net.upstream.get())) asked.push_back(std::move(r));
    return !asked.empty();
  });
  ASSERT_EQ(asked.size(), 1u);
  // The question alone, as the broker encodes it (the command's other bytes never go out).
  const std::vector<std::uint8_t> sent = WithoutEdns(asked[0].bytes);
  EXPECT_EQ(std::vector<std::uint8_t>(sent.begin() + 12, sent.end()),
            std::vector<std::uint8_t>(q.begin() + 12, q.end()));
  const std::vector<std::uint8_t> reply = ReplyWithA(asked[0].bytes, {192, 0, 2, 7});
  ASSERT_GT(::sendto(net.upstream.get(), reply.data(), reply.size(), 0,
                     reinterpret_cast<sockaddr*>(&asked[0].from), asked[0].from_len),
            0);
  (void)ServeUntil(resolver,
                   [&](const std::vector<Denial>&) { return Readable(net.client.get(), 0); });
  n = ::recv(net.client.get(), answer, sizeof answer, MSG_DONTWAIT);
  ASSERT_GE(n, 16);
  EXPECT_EQ(answer[0], 0x43);
  EXPECT_EQ(answer[3] & 0x0f, 0);
  EXPECT_EQ(std::vector<std::uint8_t>(answer + n - 4, answer + n),
            (std::vector<std::uint8_t>{192, 0, 2, 7}));
  resolver.Drain([](Denial) {}, [](const net::ConnectRequest&) {});
  EXPECT_EQ(resolver.HandedOut(*net::ParseAddress("192.0.2.7")),
            std::vector<std::string>{"pkg.test"});
  EXPECT_EQ(Find(denials, "cordon-resolver"), nullptr) << Find(denials, "cordon-resolver")->rule;
  ASSERT_EQ(::kill(pid, 0), 0);

  started->reset();
  EXPECT_EQ(::kill(pid, 0), -1) << "the resolver outlived its holder";
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace cordon::exec
